/** Workspaces of the collaboration host: members, users, invitations and API keys. */

export * from './api-keys.dto';
export * from './invitations.dto';
export * from './workspaces.dto';
