import {
  RoutingKeys,
  type Session,
  type User,
  type UserMetadataData,
  type UserUpdatedData,
} from '@hwp/contracts';
import { type Bus, newId } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import { presentUser } from './auth.presenter';
import { IdentityEntity } from './identity.entity';
import type { ClientMeta, IssuedSession, SessionsService } from './sessions.service';
import { UserEntity, type UserMetadataFields } from './user.entity';

export type Channel = { email: string; phone?: undefined } | { phone: string; email?: undefined };

export interface Authenticated {
  user: User;
  session: Session;
  sessionId: string;
}

/** `data` merged into `user_metadata` key by key, as Supabase Auth does: `null` removes a key. */
export function mergeMetadata(current: UserMetadataFields, input?: UserMetadataData): UserMetadataFields {
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(input ?? {})) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  return next as UserMetadataFields;
}

/**
 * Accounts as stored: users with their identities, found by email or phone, created, confirmed,
 * presented, signed in, and announced (`user.updated.v1`) in the caller's transaction. Shared by
 * the password and the code sign-in flows.
 */
export class Accounts {
  constructor(
    private readonly bus: Bus,
    private readonly sessions: SessionsService,
    private readonly audience: string,
  ) {}

  async view(manager: EntityManager, user: UserEntity): Promise<User> {
    const identities = await manager.find(IdentityEntity, {
      where: { userId: user.id },
      order: { createdAt: 'ASC' },
    });
    return presentUser(user, identities, this.audience);
  }
  findByChannel(manager: EntityManager, channel: Channel, lock = false): Promise<UserEntity | null> {
    return manager.findOne(UserEntity, {
      where: channel.email !== undefined ? { email: channel.email.toLowerCase() } : { phone: channel.phone },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }
  /** A new account and its identity, not yet stored. */
  newAccount(
    manager: EntityManager,
    channel: Channel,
    fields: { passwordHash: string | null; metadata: UserMetadataFields },
  ): { user: UserEntity; identity: IdentityEntity } {
    const now = new Date();
    const provider = channel.email !== undefined ? 'email' : 'phone';
    const user = manager.create(UserEntity, {
      id: newId(),
      email: channel.email?.toLowerCase() ?? null,
      phone: channel.phone ?? null,
      encryptedPassword: fields.passwordHash,
      emailConfirmedAt: null,
      phoneConfirmedAt: null,
      lastSignInAt: null,
      role: 'authenticated',
      provider,
      userMetadata: fields.metadata,
      defaultTenantId: null,
      createdAt: now,
      updatedAt: now,
    });
    const identity = manager.create(IdentityEntity, {
      id: newId(),
      userId: user.id,
      provider,
      providerId: (user.email ?? user.phone) as string,
      lastSignInAt: null,
      createdAt: now,
      updatedAt: now,
    });
    return { user, identity };
  }
  async create(
    manager: EntityManager,
    channel: Channel,
    fields: { passwordHash: string | null; metadata: UserMetadataFields },
  ): Promise<UserEntity> {
    const { user, identity } = this.newAccount(manager, channel, fields);
    await manager.insert(UserEntity, user);
    await manager.insert(IdentityEntity, identity);
    // Every account has its own tenant from the start, as its default: a tenant somebody else
    // invites the address to can only be joined by accepting, and never becomes the working one.
    await this.sessions.tenants.ensurePersonalTenant(manager, user);
    await this.emitUserUpdated(manager, user);
    return user;
  }
  async confirm(manager: EntityManager, user: UserEntity, via: 'email' | 'phone'): Promise<void> {
    const now = new Date();
    if (via === 'email' && !user.emailConfirmedAt) user.emailConfirmedAt = now;
    else if (via === 'phone' && !user.phoneConfirmedAt) user.phoneConfirmedAt = now;
    else return;
    user.updatedAt = now;
    await manager.update(
      UserEntity,
      { id: user.id },
      { emailConfirmedAt: user.emailConfirmedAt, phoneConfirmedAt: user.phoneConfirmedAt, updatedAt: now },
    );
  }
  async authenticated(manager: EntityManager, user: UserEntity, via: 'email' | 'phone', meta: ClientMeta) {
    const issued: IssuedSession = await this.sessions.start(manager, user, via, meta);
    return { user: await this.view(manager, user), session: issued.session, sessionId: issued.sessionId };
  }
  async emitUserUpdated(manager: EntityManager, user: UserEntity): Promise<void> {
    const data: UserUpdatedData = {
      userId: user.id,
      email: user.email,
      phone: user.phone,
      firstName: user.userMetadata.first_name ?? null,
      lastName: user.userMetadata.last_name ?? null,
      avatarUrl: user.userMetadata.avatar_url ?? null,
    };
    await this.bus.outbox.add(manager, { type: RoutingKeys.userUpdated, actor: user.id, data });
  }
}
