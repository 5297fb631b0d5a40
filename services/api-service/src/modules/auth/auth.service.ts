import {
  MIN_PASSWORD_LENGTH,
  type NotificationRequestedData,
  RoutingKeys,
  type Session,
  type User,
  type UserMetadataInput,
  type UserUpdatedData,
  type VerifyType,
} from '@hwp/contracts';
import { AppError, type Bus, newId, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { presentUser } from './auth.presenter';
import type { CodesService } from './codes.service';
import { IdentityEntity } from './identity.entity';
import type { PasswordHasher } from './passwords';
import type { ClientMeta, IssuedSession, SessionsService } from './sessions.service';
import { signupAttemptNotice } from './signup-attempt-notice';
import { UserEntity, type UserMetadataFields } from './user.entity';

/** Hands a message to the notifier through the outbox, in the caller's transaction. */
export type Notify = (
  manager: EntityManager,
  data: NotificationRequestedData,
  actor: string,
) => Promise<void>;

export interface AuthSettings {
  audience: string;
  requireConfirmation: boolean;
  otpTtlMinutes: number;
  /** Builds the link of an emailed code. */
  verifyLink(type: VerifyType, linkToken: string, redirectTo: string): string;
  /** An allowed redirect target: the one asked for when its origin is allowed, else the site. */
  redirectTarget(requested: string | undefined): string;
}

export interface Authenticated {
  user: User;
  session: Session;
  sessionId: string;
}

type Channel = { email: string; phone?: undefined } | { phone: string; email?: undefined };

const invalidCredentials = () => new AppError('invalid_credentials', 400, 'Invalid login credentials');
const CODE_SENT = 'If the address can receive messages, a code is on its way';

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('weak_password', 400, `Passwords need at least ${MIN_PASSWORD_LENGTH} characters`, {
      errors: [{ field: 'password', message: `at least ${MIN_PASSWORD_LENGTH} characters` }],
    });
  }
}

function mergeMetadata(current: UserMetadataFields, input?: UserMetadataInput): UserMetadataFields {
  const next = { ...current };
  for (const key of ['first_name', 'last_name', 'avatar_url'] as const) {
    if (input?.[key] !== undefined) next[key] = input[key];
  }
  return next;
}

/**
 * Accounts: signup, password login, passwordless codes (magic link, phone OTP), verification,
 * recovery and account updates. Supabase Auth (GoTrue) is the model for shapes and behaviour.
 */
export class AuthService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsService,
    private readonly codes: CodesService,
    private readonly notify: Notify,
    private readonly settings: AuthSettings,
  ) {}

  async view(manager: EntityManager, user: UserEntity): Promise<User> {
    const identities = await manager.find(IdentityEntity, {
      where: { userId: user.id },
      order: { createdAt: 'ASC' },
    });
    return presentUser(user, identities, this.settings.audience);
  }

  async getUser(userId: string): Promise<User> {
    const manager = this.dataSource.manager;
    return this.view(manager, await manager.findOneByOrFail(UserEntity, { id: userId }));
  }

  private findByChannel(manager: EntityManager, channel: Channel, lock = false): Promise<UserEntity | null> {
    return manager.findOne(UserEntity, {
      where: channel.email !== undefined ? { email: channel.email.toLowerCase() } : { phone: channel.phone },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  private async emitUserUpdated(manager: EntityManager, user: UserEntity): Promise<void> {
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

  /** A new account and its identity, not yet stored. */
  private newAccount(
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

  private async createUser(
    manager: EntityManager,
    channel: Channel,
    fields: { passwordHash: string | null; metadata: UserMetadataFields },
  ): Promise<UserEntity> {
    const { user, identity } = this.newAccount(manager, channel, fields);
    await manager.insert(UserEntity, user);
    await manager.insert(IdentityEntity, identity);
    await this.emitUserUpdated(manager, user);
    return user;
  }

  private async authenticated(
    manager: EntityManager,
    user: UserEntity,
    via: 'email' | 'phone',
    meta: ClientMeta,
  ) {
    const issued: IssuedSession = await this.sessions.start(manager, user, via, meta);
    return { user: await this.view(manager, user), session: issued.session, sessionId: issued.sessionId };
  }

  /** Sends a code (and, for email, a link) through the notifier. */
  private async sendCode(
    manager: EntityManager,
    purpose: VerifyType,
    recipient: string,
    user: UserEntity | null,
    redirectTo?: string,
  ): Promise<void> {
    const target = this.settings.redirectTarget(redirectTo);
    const { code, linkToken } = await this.codes.issue(manager, {
      purpose,
      recipient,
      userId: user?.id ?? null,
      redirectTo: target,
    });
    if (!user) return;
    const minutes = this.settings.otpTtlMinutes;
    if (purpose === 'sms') {
      await this.notify(
        manager,
        {
          channel: 'sms',
          to: recipient,
          template: 'phone_otp',
          text: `Your verification code is ${code}. It expires in ${minutes} minutes.`,
        },
        user.id,
      );
      return;
    }
    const link = this.settings.verifyLink(purpose, linkToken as string, target);
    const subjects = {
      magiclink: 'Your sign-in link',
      signup: 'Confirm your email address',
      recovery: 'Reset your password',
    };
    await this.notify(
      manager,
      {
        channel: 'email',
        to: recipient,
        template: purpose,
        subject: subjects[purpose],
        text: `Your code is ${code}. It expires in ${minutes} minutes.\n\nOr open this link:\n${link}\n\nIf you did not ask for this, ignore this message.`,
        vars: { code, link },
      },
      user.id,
    );
  }

  async signup(
    input: { email?: string; phone?: string; password: string; data?: UserMetadataInput },
    meta: ClientMeta,
  ): Promise<{ user: User; session: Session | null; sessionId: string | null }> {
    if ((input.email === undefined) === (input.phone === undefined)) {
      throw new ValidationError('Sign up with either email or phone', [
        {
          field: input.email === undefined ? 'email' : 'phone',
          message: 'give exactly one of email or phone',
        },
      ]);
    }
    checkPassword(input.password);
    const channel: Channel =
      input.email !== undefined ? { email: input.email } : { phone: input.phone as string };
    const via = channel.email !== undefined ? 'email' : 'phone';
    const passwordHash = await this.hasher.hash(input.password);
    return this.bus.transaction(async (manager) => {
      let user = await this.findByChannel(manager, channel, true);
      const confirmed = user && (via === 'email' ? user.emailConfirmedAt : user.phoneConfirmedAt);
      if (user && confirmed) {
        if (this.settings.requireConfirmation) return this.repeatedSignup(manager, user, channel, input.data);
        // Without confirmation a signup signs in at once, so no answer could hide the account
        // (GoTrue too answers an error here: `user_already_exists`).
        throw via === 'email'
          ? new AppError('email_exists', 409, 'An account with this email address already exists')
          : new AppError('phone_exists', 409, 'An account with this phone number already exists');
      }
      if (user) {
        // Never confirmed, so nobody has proven they own it: the new signup takes it over.
        user.encryptedPassword = passwordHash;
        user.userMetadata = mergeMetadata(user.userMetadata, input.data);
        user.updatedAt = new Date();
        await manager.save(UserEntity, user);
      } else {
        user = await this.createUser(manager, channel, {
          passwordHash,
          metadata: mergeMetadata({}, input.data),
        });
      }
      if (this.settings.requireConfirmation) {
        const recipient = (user.email ?? user.phone) as string;
        await this.sendCode(manager, via === 'email' ? 'signup' : 'sms', recipient, user);
        return { user: await this.view(manager, user), session: null, sessionId: null };
      }
      await this.confirm(manager, user, via);
      return this.authenticated(manager, user, via, meta);
    });
  }

  /**
   * A signup for an address its owner has confirmed (DECISIONS.md section 1): the account is left
   * as it is, its owner is told, and the caller gets what a new signup gets, GoTrue's obfuscated
   * user (same fields, a fresh id, no session), so the answer does not tell that the address is
   * registered. Unlike GoTrue's, the user carries an identity as a new one does (an empty list is a
   * known tell). The resend interval applies as to a new address's confirmation code: a dead
   * `signup` code is stored for the address (it can never be redeemed).
   */
  private async repeatedSignup(
    manager: EntityManager,
    owner: UserEntity,
    channel: Channel,
    data: UserMetadataInput | undefined,
  ): Promise<{ user: User; session: null; sessionId: null }> {
    const recipient = (channel.email?.toLowerCase() ?? channel.phone) as string;
    await this.codes.issue(manager, { purpose: 'signup', recipient, userId: null });
    await this.notify(
      manager,
      signupAttemptNotice(channel.email !== undefined ? 'email' : 'sms', recipient),
      owner.id,
    );
    const { user, identity } = this.newAccount(manager, channel, {
      passwordHash: null,
      metadata: mergeMetadata({}, data),
    });
    return { user: presentUser(user, [identity], this.settings.audience), session: null, sessionId: null };
  }

  private async confirm(manager: EntityManager, user: UserEntity, via: 'email' | 'phone'): Promise<void> {
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

  /** Password login by email or phone. Unknown account and wrong password answer alike, in like time. */
  async loginWithPassword(channel: Channel, password: string, meta: ClientMeta): Promise<Authenticated> {
    const via = channel.email !== undefined ? 'email' : 'phone';
    const user = await this.findByChannel(this.dataSource.manager, channel);
    const ok = await this.hasher.verify(user?.encryptedPassword ?? null, password);
    if (!user || !ok) throw invalidCredentials();
    if (this.settings.requireConfirmation) {
      if (via === 'email' && !user.emailConfirmedAt) {
        throw new AppError('email_not_confirmed', 400, 'Email address not confirmed: use the code we sent');
      }
      if (via === 'phone' && !user.phoneConfirmedAt) {
        throw new AppError('phone_not_confirmed', 400, 'Phone number not confirmed: use the code we sent');
      }
    }
    return this.bus.transaction((manager) => this.authenticated(manager, user, via, meta));
  }

  /**
   * Magic link or phone OTP. An unknown address gets an account on the spot (as Supabase Auth
   * does), confirmed when the code is redeemed; the answer is the same either way.
   */
  async sendPasswordless(channel: Channel, redirectTo?: string): Promise<{ message: string }> {
    await this.bus.transaction(async (manager) => {
      const user =
        (await this.findByChannel(manager, channel, true)) ??
        (await this.createUser(manager, channel, { passwordHash: null, metadata: {} }));
      const recipient = (channel.email?.toLowerCase() ?? channel.phone) as string;
      await this.sendCode(
        manager,
        channel.email !== undefined ? 'magiclink' : 'sms',
        recipient,
        user,
        redirectTo,
      );
    });
    return { message: CODE_SENT };
  }

  /** Recovery email: only accounts that exist get one, but every address answers alike. */
  async recover(email: string, redirectTo?: string): Promise<{ message: string }> {
    await this.bus.transaction(async (manager) => {
      const user = await this.findByChannel(manager, { email });
      await this.sendCode(manager, 'recovery', email.toLowerCase(), user, redirectTo);
    });
    return { message: CODE_SENT };
  }

  /**
   * Redeems a code: by address and 6-digit code, or by the link token. A wrong code counts an
   * attempt (committed even though the answer is an error).
   */
  async verify(
    input: { type: VerifyType; email?: string; phone?: string; token?: string; tokenHash?: string },
    meta: ClientMeta,
  ): Promise<Authenticated & { redirectTo: string | null }> {
    const recipient = input.type === 'sms' ? input.phone : input.email?.toLowerCase();
    if (!input.tokenHash && !(recipient && input.token)) {
      throw new ValidationError('Give the code with its address, or the link token', [
        { field: input.type === 'sms' ? 'phone' : 'email', message: 'required with token' },
        { field: 'token', message: 'the 6-digit code (or give token_hash)' },
      ]);
    }
    const outcome = await this.bus.transaction(async (manager) => {
      const redemption = input.tokenHash
        ? await this.codes.redeemLink(manager, input.type, input.tokenHash)
        : await this.codes.redeemCode(manager, [input.type], recipient as string, input.token as string);
      if (!redemption.ok) return redemption;
      const user = await manager.findOneOrFail(UserEntity, {
        where: { id: redemption.userId },
        lock: { mode: 'pessimistic_write' },
      });
      const via = input.type === 'sms' ? 'phone' : 'email';
      await this.confirm(manager, user, via);
      const signedIn = await this.authenticated(manager, user, via, meta);
      return { ok: true as const, ...signedIn, redirectTo: redemption.redirectTo };
    });
    if (!outcome.ok) throw outcome.error;
    return outcome;
  }

  /** `PUT /auth/user`: a new password ends the user's other sessions. */
  async updateUser(
    userId: string,
    sessionId: string,
    input: { password?: string; data?: UserMetadataInput },
  ): Promise<User> {
    if (input.password !== undefined) checkPassword(input.password);
    const passwordHash = input.password !== undefined ? await this.hasher.hash(input.password) : undefined;
    return this.bus.transaction(async (manager) => {
      const user = await manager.findOneOrFail(UserEntity, {
        where: { id: userId },
        lock: { mode: 'pessimistic_write' },
      });
      if (passwordHash) {
        user.encryptedPassword = passwordHash;
        await this.sessions.revokeOthersIn(manager, userId, sessionId);
      }
      if (input.data) user.userMetadata = mergeMetadata(user.userMetadata, input.data);
      user.updatedAt = new Date();
      await manager.save(UserEntity, user);
      if (input.data) await this.emitUserUpdated(manager, user);
      return this.view(manager, user);
    });
  }

  /** Profile edits (names, avatar, default tenant) with the user.updated event, in one transaction. */
  async updateProfile(
    manager: EntityManager,
    user: UserEntity,
    patch: {
      first_name?: string | null;
      last_name?: string | null;
      avatar_url?: string | null;
      default_tenant_id?: string | null;
    },
  ): Promise<void> {
    const metadata = { ...user.userMetadata };
    for (const key of ['first_name', 'last_name', 'avatar_url'] as const) {
      const value = patch[key];
      if (value === null) delete metadata[key];
      else if (value !== undefined) metadata[key] = value;
    }
    user.userMetadata = metadata;
    if (patch.default_tenant_id !== undefined) user.defaultTenantId = patch.default_tenant_id;
    user.updatedAt = new Date();
    await manager.save(UserEntity, user);
    await this.emitUserUpdated(manager, user);
  }
}
