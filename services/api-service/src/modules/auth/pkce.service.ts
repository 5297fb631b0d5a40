import { createHash, timingSafeEqual } from 'node:crypto';
import type { VerifyType } from '@hwp/contracts';
import { AppError, newId } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import { AuthFlowStateEntity } from './auth-flow-state.entity';
import { randomToken, sha256 } from './tokens';

/** A client's PKCE challenge (RFC 7636): S256 or plain. */
export interface PkceChallenge {
  challenge: string;
  method: 's256' | 'plain';
}

/** The challenge of a GoTrue request body, when the client uses PKCE. */
export function pkceOf(body: {
  code_challenge?: string | null;
  code_challenge_method?: string | null;
}): PkceChallenge | undefined {
  if (!body.code_challenge) return undefined;
  return {
    challenge: body.code_challenge,
    method: body.code_challenge_method === 'plain' ? 'plain' : 's256',
  };
}

/** How long the auth code of an opened link may be exchanged (GoTrue: 5 minutes). */
const AUTH_CODE_TTL_MS = 5 * 60_000;

function flowNotFound(): AppError {
  return new AppError('validation_failed', 'Invalid or expired auth code: start the sign-in again', {
    extra: { gotrue: 'flow_state_not_found' },
  });
}

/**
 * PKCE flows of the GoTrue surface: the emailed link of a flow started with a code challenge
 * redirects with `?code=` instead of tokens, and only the holder of the verifier can exchange that
 * code for a session (`POST /auth/v1/token?grant_type=pkce`).
 */
export class PkceFlows {
  /** Binds the emailed link (by its token) to the challenge; in the transaction issuing the code. */
  async start(
    manager: EntityManager,
    flow: PkceChallenge & { linkToken: string; userId: string; purpose: VerifyType; expiresAt: Date },
  ): Promise<void> {
    await manager.insert(AuthFlowStateEntity, {
      id: newId(),
      userId: flow.userId,
      purpose: flow.purpose,
      linkHash: sha256(flow.linkToken),
      authCodeHash: null,
      codeChallenge: flow.challenge,
      codeChallengeMethod: flow.method,
      expiresAt: flow.expiresAt,
      createdAt: new Date(),
    });
  }

  /** The opened link's flow, if any: it now holds a fresh auth code, which is returned. */
  async open(manager: EntityManager, linkToken: string): Promise<string | null> {
    const flow = await manager.findOne(AuthFlowStateEntity, {
      where: { linkHash: sha256(linkToken) },
      lock: { mode: 'pessimistic_write' },
    });
    if (!flow) return null;
    const authCode = randomToken();
    await manager.update(
      AuthFlowStateEntity,
      { id: flow.id },
      { linkHash: null, authCodeHash: sha256(authCode), expiresAt: new Date(Date.now() + AUTH_CODE_TTL_MS) },
    );
    return authCode;
  }

  /**
   * Redeems an auth code with its verifier, once: any attempt spends the code (the caller commits
   * the returned error's transaction too), so a wrong verifier cannot be retried.
   */
  async exchange(
    manager: EntityManager,
    authCode: string,
    verifier: string,
  ): Promise<{ ok: true; userId: string; purpose: VerifyType } | { ok: false; error: AppError }> {
    const flow = await manager.findOne(AuthFlowStateEntity, {
      where: { authCodeHash: sha256(authCode) },
      lock: { mode: 'pessimistic_write' },
    });
    if (!flow) return { ok: false, error: flowNotFound() };
    await manager.delete(AuthFlowStateEntity, { id: flow.id });
    if (flow.expiresAt.getTime() <= Date.now()) return { ok: false, error: flowNotFound() };
    const expected =
      flow.codeChallengeMethod === 'plain'
        ? verifier
        : createHash('sha256').update(verifier).digest('base64url');
    const a = Buffer.from(expected);
    const b = Buffer.from(flow.codeChallenge);
    if (a.length !== b.length || !timingSafeEqual(a, b)) {
      const error = new AppError('validation_failed', 'The code verifier does not match the challenge', {
        extra: { gotrue: 'bad_code_verifier' },
      });
      return { ok: false, error };
    }
    return { ok: true, userId: flow.userId, purpose: flow.purpose };
  }

  /** Drops flows that expired a day ago (housekeeping). */
  async purgeExpired(manager: EntityManager): Promise<void> {
    await manager.query(`DELETE FROM auth_flow_states WHERE expires_at < now() - interval '1 day'`);
  }
}
