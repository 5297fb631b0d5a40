import type { NotificationRequestedData, ResendType, UserMetadataData, VerifyType } from '@hwp/contracts';
import { type Bus, ValidationError } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import { type Accounts, type Authenticated, type Channel, mergeMetadata } from './accounts';
import type { CodesService } from './codes.service';
import type { PkceChallenge, PkceFlows } from './pkce.service';
import type { ClientMeta } from './sessions.service';
import { UserEntity } from './user.entity';

/** Hands a message to the notifier through the outbox, in the caller's transaction. */
export type Notify = (
  manager: EntityManager,
  data: NotificationRequestedData,
  actor: string,
) => Promise<void>;

export interface CodeSettings {
  otpTtlMinutes: number;
  /** Builds the link of an emailed code. */
  verifyLink(type: VerifyType, linkToken: string, redirectTo: string): string;
  /** An allowed redirect target: the one asked for when its origin is allowed, else the site. */
  redirectTarget(requested: string | undefined): string;
}

const CODE_SENT = 'If the address can receive messages, a code is on its way';

/**
 * Sign-in by one-time code: sending codes and links (magic link, phone OTP, signup confirmation,
 * recovery), redeeming them, and the PKCE flows of emailed links.
 */
export class CodeSignIn {
  constructor(
    private readonly bus: Bus,
    private readonly accounts: Accounts,
    private readonly codes: CodesService,
    private readonly notify: Notify,
    private readonly settings: CodeSettings,
    private readonly flows: PkceFlows,
  ) {}

  /**
   * Magic link or phone OTP. An unknown address gets an account on the spot (as Supabase Auth
   * does), confirmed when the code is redeemed; the answer is the same either way.
   */
  async sendPasswordless(
    channel: Channel,
    redirectTo?: string,
    options: { createUser?: boolean; data?: UserMetadataData; pkce?: PkceChallenge } = {},
  ): Promise<{ message: string }> {
    await this.bus.transaction(async (manager) => {
      const found = await this.accounts.findByChannel(manager, channel, true);
      // Without an account and with `create_user: false` nothing is sent; the answer stays the same.
      if (!found && options.createUser === false) return;
      const user =
        found ??
        (await this.accounts.create(manager, channel, {
          passwordHash: null,
          metadata: mergeMetadata({}, options.data),
        }));
      const recipient = (channel.email?.toLowerCase() ?? channel.phone) as string;
      await this.sendCode(
        manager,
        channel.email !== undefined ? 'magiclink' : 'sms',
        recipient,
        user,
        redirectTo,
        options.pkce,
      );
    });
    return { message: CODE_SENT };
  }
  /** Recovery email: only accounts that exist get one, but every address answers alike. */
  async recover(email: string, redirectTo?: string, pkce?: PkceChallenge): Promise<{ message: string }> {
    await this.bus.transaction(async (manager) => {
      const user = await this.accounts.findByChannel(manager, { email });
      await this.sendCode(manager, 'recovery', email.toLowerCase(), user, redirectTo, pkce);
    });
    return { message: CODE_SENT };
  }
  /**
   * Sends a signup's confirmation code again (GoTrue's `resend`). Only an account whose address is
   * not confirmed yet gets one; an unknown or confirmed address answers alike and gets nothing, with
   * the same resend interval (a dead `signup` code is stored for it, as a repeated signup does).
   * This host offers no email or phone change, so `email_change` and `phone_change` never have a
   * pending code: they answer alike and send nothing.
   */
  async resend(
    type: ResendType,
    address: { email?: string; phone?: string },
    redirectTo?: string,
  ): Promise<{ message: string }> {
    if ((address.email === undefined) === (address.phone === undefined)) {
      throw new ValidationError('Give exactly one of email or phone', [
        {
          field: address.email === undefined ? 'email' : 'phone',
          message: 'give exactly one of email or phone',
        },
      ]);
    }
    const channel: Channel =
      address.email !== undefined ? { email: address.email } : { phone: address.phone as string };
    const byEmail = channel.email !== undefined;
    if ((type === 'sms' || type === 'phone_change') && byEmail) {
      throw new ValidationError(`${type} is resent to a phone`, [{ field: 'phone', message: 'is required' }]);
    }
    if (type === 'email_change' && !byEmail) {
      throw new ValidationError('email_change is resent to an email', [
        { field: 'email', message: 'is required' },
      ]);
    }
    if (type === 'email_change' || type === 'phone_change') return { message: CODE_SENT };
    const recipient = (channel.email?.toLowerCase() ?? channel.phone) as string;
    await this.bus.transaction(async (manager) => {
      const user = await this.accounts.findByChannel(manager, channel, true);
      const pending = user && !(byEmail ? user.emailConfirmedAt : user.phoneConfirmedAt);
      if (pending) {
        await this.sendCode(
          manager,
          byEmail ? 'signup' : 'sms',
          recipient,
          user,
          redirectTo,
          undefined,
          true,
        );
      } else await this.codes.issue(manager, { purpose: 'signup', recipient, userId: null });
    });
    return { message: CODE_SENT };
  }
  /**
   * Redeems a code: by address and 6-digit code, or by the link token. A wrong code counts an
   * attempt (committed even though the answer is an error).
   */
  async verify(
    input: {
      /** The kind of code; several when any of them may match (GoTrue's `email` type). */
      type: VerifyType | readonly VerifyType[];
      email?: string;
      phone?: string;
      token?: string;
      tokenHash?: string;
    },
    meta: ClientMeta,
  ): Promise<Authenticated & { redirectTo: string | null }> {
    const purposes: readonly VerifyType[] = typeof input.type === 'string' ? [input.type] : input.type;
    const bySms = purposes.includes('sms');
    const recipient = bySms ? input.phone : input.email?.toLowerCase();
    if (!input.tokenHash && !(recipient && input.token)) {
      throw new ValidationError('Give the code with its address, or the link token', [
        { field: bySms ? 'phone' : 'email', message: 'required with token' },
        { field: 'token', message: 'the 6-digit code (or give token_hash)' },
      ]);
    }
    const outcome = await this.bus.transaction(async (manager) => {
      const redeemed = await this.redeem(manager, purposes, { ...input, recipient });
      if (!redeemed.ok) return redeemed;
      const signedIn = await this.accounts.authenticated(manager, redeemed.user, redeemed.via, meta);
      return { ok: true as const, ...signedIn, redirectTo: redeemed.redirectTo };
    });
    if (!outcome.ok) throw outcome.error;
    return outcome;
  }
  /**
   * The link of an email (`GET /auth/verify`): signs in, or, when the request that sent it carried a
   * PKCE challenge, hands back an auth code for the redirect instead of tokens.
   */
  async openLink(
    input: { type: VerifyType; tokenHash: string },
    meta: ClientMeta,
  ): Promise<
    (Authenticated & { redirectTo: string | null }) | { authCode: string; redirectTo: string | null }
  > {
    const outcome = await this.bus.transaction(async (manager) => {
      const redeemed = await this.redeem(manager, [input.type], { tokenHash: input.tokenHash });
      if (!redeemed.ok) return redeemed;
      const authCode = await this.flows.open(manager, input.tokenHash);
      if (authCode) return { ok: true as const, authCode, redirectTo: redeemed.redirectTo };
      const signedIn = await this.accounts.authenticated(manager, redeemed.user, redeemed.via, meta);
      return { ok: true as const, ...signedIn, redirectTo: redeemed.redirectTo };
    });
    if (!outcome.ok) throw outcome.error;
    const { ok: _ok, ...result } = outcome;
    return result;
  }
  /** `grant_type=pkce`: the auth code of an opened link and the verifier of its challenge. */
  async exchangePkce(authCode: string, verifier: string, meta: ClientMeta): Promise<Authenticated> {
    const outcome = await this.bus.transaction(async (manager) => {
      const flow = await this.flows.exchange(manager, authCode, verifier);
      if (!flow.ok) return flow;
      const user = await manager.findOneByOrFail(UserEntity, { id: flow.userId });
      return { ok: true as const, ...(await this.accounts.authenticated(manager, user, 'email', meta)) };
    });
    if (!outcome.ok) throw outcome.error;
    const { ok: _ok, ...signedIn } = outcome;
    return signedIn;
  }
  /** Redeems a code or link token (a wrong code counts an attempt) and confirms the address. */
  private async redeem(
    manager: EntityManager,
    purposes: readonly VerifyType[],
    input: { recipient?: string; token?: string; tokenHash?: string },
  ) {
    const redemption = input.tokenHash
      ? await this.codes.redeemLink(manager, purposes, input.tokenHash)
      : await this.codes.redeemCode(manager, purposes, input.recipient as string, input.token as string);
    if (!redemption.ok) return redemption;
    const user = await manager.findOneOrFail(UserEntity, {
      where: { id: redemption.userId },
      lock: { mode: 'pessimistic_write' },
    });
    const via: 'email' | 'phone' = purposes.includes('sms') ? 'phone' : 'email';
    if (
      !user.emailConfirmedAt &&
      !user.phoneConfirmedAt &&
      !redemption.confirmsSignup &&
      user.encryptedPassword
    ) {
      // Whoever set this password never proved they own the address (anyone may sign up with any
      // address): the owner's first sign-in by code drops it, so it cannot be used to sign in later.
      user.encryptedPassword = null;
      await manager.update(UserEntity, { id: user.id }, { encryptedPassword: null });
    }
    await this.accounts.confirm(manager, user, via);
    return { ok: true as const, user, via, redirectTo: redemption.redirectTo };
  }
  /** Sends a code (and, for email, a link) through the notifier. */
  async sendCode(
    manager: EntityManager,
    purpose: VerifyType,
    recipient: string,
    user: UserEntity | null,
    redirectTo?: string,
    pkce?: PkceChallenge,
    confirmsSignup = false,
  ): Promise<void> {
    const target = this.settings.redirectTarget(redirectTo);
    const { code, linkToken } = await this.codes.issue(manager, {
      purpose,
      recipient,
      userId: user?.id ?? null,
      redirectTo: target,
      confirmsSignup,
    });
    if (pkce && linkToken && user) {
      const expiresAt = new Date(Date.now() + this.settings.otpTtlMinutes * 60_000);
      await this.flows.start(manager, { ...pkce, linkToken, userId: user.id, purpose, expiresAt });
    }
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
}
