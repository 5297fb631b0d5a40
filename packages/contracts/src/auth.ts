// biome-ignore-all assist/source/organizeImports: evaluation order is the order of the OpenAPI schemas
// Auth contracts, one module per concern; this entry keeps every name importable from './auth'.
export * from './auth-validators';
export * from './user-metadata';
export * from './auth-requests.dto';
export * from './auth-user.dto';
export * from './auth-session.dto';
export * from './auth-tokens.dto';
export * from './gotrue.dto';
