/** Accounts and sessions of the API host (section 2.1; DECISIONS.md section 1), and its GoTrue surface. */

export * from './auth-requests.dto';
export * from './auth-session.dto';
export * from './auth-tokens.dto';
export * from './auth-user.dto';
export * from './auth-validators';
export * from './gotrue.dto';
export * from './user-metadata';
