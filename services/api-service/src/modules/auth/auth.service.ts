import { MIN_PASSWORD_LENGTH, type Session, type User, type UserMetadataData } from '@hwp/contracts';
import { AppError, type Bus, ValidationError } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { Accounts, type Authenticated, type Channel, mergeMetadata } from './accounts';
import { presentUser } from './auth.presenter';
import { type CodeSettings, CodeSignIn, type Notify } from './code-sign-in';
import type { CodesService } from './codes.service';
import type { PasswordHasher } from './passwords';
import { type PkceChallenge, PkceFlows } from './pkce.service';
import type { ClientMeta, SessionsService } from './sessions.service';
import { signupAttemptNotice } from './signup-attempt-notice';
import { UserEntity } from './user.entity';

export type { Authenticated } from './accounts';
export type { Notify } from './code-sign-in';

export interface AuthSettings extends CodeSettings {
  audience: string;
  requireConfirmation: boolean;
}

const invalidCredentials = () => new AppError('invalid_credentials', 'Invalid login credentials');

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AppError('weak_password', `Passwords need at least ${MIN_PASSWORD_LENGTH} characters`, {
      errors: [{ field: 'password', message: `at least ${MIN_PASSWORD_LENGTH} characters` }],
    });
  }
}

/**
 * Accounts: signup, password login and account updates here; sign-in by one-time code (magic link,
 * phone OTP, verification, recovery, PKCE) in CodeSignIn, stored accounts in Accounts. Supabase
 * Auth (GoTrue) is the model for shapes and behaviour.
 */
export class AuthService {
  private readonly accounts: Accounts;
  private readonly codeSignIn: CodeSignIn;

  constructor(
    private readonly dataSource: DataSource,
    private readonly bus: Bus,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionsService,
    private readonly codes: CodesService,
    private readonly notify: Notify,
    private readonly settings: AuthSettings,
    flows = new PkceFlows(),
  ) {
    this.accounts = new Accounts(bus, sessions, settings.audience);
    this.codeSignIn = new CodeSignIn(bus, this.accounts, codes, notify, settings, flows);
  }

  /** The user as section 2.1 shows it, from a stored row (in the caller's transaction). */
  view(manager: EntityManager, user: UserEntity): Promise<User> {
    return this.accounts.view(manager, user);
  }

  // Sign-in by code: see CodeSignIn.
  sendPasswordless(...args: Parameters<CodeSignIn['sendPasswordless']>) {
    return this.codeSignIn.sendPasswordless(...args);
  }

  resend(...args: Parameters<CodeSignIn['resend']>) {
    return this.codeSignIn.resend(...args);
  }

  recover(...args: Parameters<CodeSignIn['recover']>) {
    return this.codeSignIn.recover(...args);
  }

  verify(...args: Parameters<CodeSignIn['verify']>) {
    return this.codeSignIn.verify(...args);
  }

  openLink(...args: Parameters<CodeSignIn['openLink']>) {
    return this.codeSignIn.openLink(...args);
  }

  exchangePkce(...args: Parameters<CodeSignIn['exchangePkce']>) {
    return this.codeSignIn.exchangePkce(...args);
  }

  async getUser(userId: string): Promise<User> {
    const manager = this.dataSource.manager;
    return this.accounts.view(manager, await manager.findOneByOrFail(UserEntity, { id: userId }));
  }

  async signup(
    input: { email?: string; phone?: string; password: string; data?: UserMetadataData },
    meta: ClientMeta,
    link: { redirectTo?: string; pkce?: PkceChallenge } = {},
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
      let user = await this.accounts.findByChannel(manager, channel, true);
      const confirmed = user && (via === 'email' ? user.emailConfirmedAt : user.phoneConfirmedAt);
      if (user && confirmed) {
        if (this.settings.requireConfirmation) return this.repeatedSignup(manager, user, channel, input.data);
        // Without confirmation a signup signs in at once, so no answer could hide the account
        // (GoTrue too answers an error here: `user_already_exists`).
        throw via === 'email'
          ? new AppError('email_exists', 'An account with this email address already exists')
          : new AppError('phone_exists', 'An account with this phone number already exists');
      }
      if (user) {
        // Never confirmed, so nobody has proven they own it: the new signup takes it over.
        user.encryptedPassword = passwordHash;
        user.userMetadata = mergeMetadata(user.userMetadata, input.data);
        user.updatedAt = new Date();
        await manager.save(UserEntity, user);
      } else {
        user = await this.accounts.create(manager, channel, {
          passwordHash,
          metadata: mergeMetadata({}, input.data),
        });
      }
      if (this.settings.requireConfirmation) {
        const recipient = (user.email ?? user.phone) as string;
        await this.codeSignIn.sendCode(
          manager,
          via === 'email' ? 'signup' : 'sms',
          recipient,
          user,
          link.redirectTo,
          link.pkce,
          true,
        );
        return { user: await this.accounts.view(manager, user), session: null, sessionId: null };
      }
      await this.accounts.confirm(manager, user, via);
      return this.accounts.authenticated(manager, user, via, meta);
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
    data: UserMetadataData | undefined,
  ): Promise<{ user: User; session: null; sessionId: null }> {
    const recipient = (channel.email?.toLowerCase() ?? channel.phone) as string;
    await this.codes.issue(manager, { purpose: 'signup', recipient, userId: null });
    await this.notify(
      manager,
      signupAttemptNotice(channel.email !== undefined ? 'email' : 'sms', recipient),
      owner.id,
    );
    const { user, identity } = this.accounts.newAccount(manager, channel, {
      passwordHash: null,
      metadata: mergeMetadata({}, data),
    });
    return { user: presentUser(user, [identity], this.settings.audience), session: null, sessionId: null };
  }

  /** Password login by email or phone. Unknown account and wrong password answer alike, in like time. */
  async loginWithPassword(channel: Channel, password: string, meta: ClientMeta): Promise<Authenticated> {
    const via = channel.email !== undefined ? 'email' : 'phone';
    const user = await this.accounts.findByChannel(this.dataSource.manager, channel);
    const ok = await this.hasher.verify(user?.encryptedPassword ?? null, password);
    if (!user || !ok) throw invalidCredentials();
    if (this.settings.requireConfirmation) {
      if (via === 'email' && !user.emailConfirmedAt) {
        throw new AppError('email_not_confirmed', 'Email address not confirmed: use the code we sent');
      }
      if (via === 'phone' && !user.phoneConfirmedAt) {
        throw new AppError('phone_not_confirmed', 'Phone number not confirmed: use the code we sent');
      }
    }
    return this.bus.transaction((manager) => this.accounts.authenticated(manager, user, via, meta));
  }

  /** `PUT /auth/user`: a new password ends the user's other sessions. */
  async updateUser(
    userId: string,
    sessionId: string,
    input: { password?: string; data?: UserMetadataData },
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
      if (input.data) await this.accounts.emitUserUpdated(manager, user);
      return this.accounts.view(manager, user);
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
    await this.accounts.emitUserUpdated(manager, user);
  }
}
