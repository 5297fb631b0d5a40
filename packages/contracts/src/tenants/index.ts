/** Tenants, their members, profiles and invitations (API host). */
export * from './tenants.dto';
