import type { Identity, User } from '@hwp/contracts';
import type { IdentityEntity } from './identity.entity';
import type { UserEntity } from './user.entity';

const iso = (date: Date | null): string | null => (date ? date.toISOString() : null);

function earliest(a: Date | null, b: Date | null): Date | null {
  if (!a) return b;
  if (!b) return a;
  return a < b ? a : b;
}

/** The user of section 2.1, in Supabase Auth's shape: every field present. */
export function presentUser(user: UserEntity, identities: IdentityEntity[], audience: string): User {
  return {
    id: user.id,
    aud: audience,
    role: user.role,
    email: user.email ?? '',
    email_confirmed_at: iso(user.emailConfirmedAt),
    phone: user.phone ?? '',
    phone_confirmed_at: iso(user.phoneConfirmedAt),
    confirmed_at: iso(earliest(user.emailConfirmedAt, user.phoneConfirmedAt)),
    last_sign_in_at: iso(user.lastSignInAt),
    app_metadata: {
      provider: user.provider,
      providers: [...new Set(identities.map((i) => i.provider))].sort(),
    },
    user_metadata: { ...user.userMetadata },
    identities: identities.map((identity) => presentIdentity(user, identity)),
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
  };
}

function presentIdentity(user: UserEntity, identity: IdentityEntity): Identity {
  return {
    identity_id: identity.id,
    id: user.id,
    user_id: user.id,
    identity_data: {
      sub: user.id,
      ...(user.email ? { email: user.email } : {}),
      ...(user.phone ? { phone: user.phone } : {}),
      email_verified: user.emailConfirmedAt !== null,
      phone_verified: user.phoneConfirmedAt !== null,
    },
    provider: identity.provider,
    last_sign_in_at: iso(identity.lastSignInAt),
    created_at: identity.createdAt.toISOString(),
    updated_at: identity.updatedAt.toISOString(),
    email: identity.provider === 'email' ? identity.providerId : '',
  };
}
