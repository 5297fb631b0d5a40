import { randomBytes } from 'node:crypto';
import type { AuthResponse } from '@hwp/contracts';
import { startTestService, type TestService } from '@hwp/platform/test-kit';
import type { Express } from 'express';
import request from 'supertest';
import { type ApiConfig, loadApiConfig } from '../../src/config';
import { apiService } from '../../src/service';

export type ApiTestService = TestService<ApiConfig>;

/**
 * The API host on a fresh Postgres database and its own RabbitMQ namespace. Signup confirms at once
 * unless a test asks otherwise; every other setting is the production default.
 */
export function startApi(env: Record<string, string> = {}): Promise<ApiTestService> {
  return startTestService(apiService, loadApiConfig, { AUTH_REQUIRE_CONFIRMATION: 'false', ...env });
}

/**
 * A client address of its own (through X-Forwarded-For, which test services trust from loopback with
 * TRUST_PROXY=loopback, as production trusts its gateway), so per-IP limits of one test never spill
 * into another.
 */
export function newClientIp(): string {
  const b = randomBytes(3);
  return `10.${b[0]}.${b[1]}.${b[2]}`;
}

export function uniqueEmail(prefix = 'user'): string {
  return `${prefix}-${randomBytes(5).toString('hex')}@example.test`;
}

export function uniquePhone(): string {
  return `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
}

export interface TestUser extends AuthResponse {
  email: string;
  password: string;
  ip: string;
  token: string;
}

/** Signs a user up by email (confirmation off) and returns the session. */
export async function signUp(app: Express, data: Record<string, string> = {}): Promise<TestUser> {
  const email = uniqueEmail();
  const password = 'correct horse battery';
  const ip = newClientIp();
  const res = await request(app)
    .post('/auth/signup')
    .set('X-Forwarded-For', ip)
    .send({ email, password, ...(Object.keys(data).length ? { data } : {}) });
  if (res.status !== 200) throw new Error(`signup failed: ${res.status} ${JSON.stringify(res.body)}`);
  const body = res.body as AuthResponse;
  return { ...body, email, password, ip, token: body.session.access_token };
}

/** Supertest with the user's bearer token and, when given, their client address (X-Forwarded-For). */
export function as(app: Express, user: { token: string; ip?: string }) {
  const agent = request(app);
  const wrap = (method: 'get' | 'post' | 'put' | 'patch' | 'delete') => (path: string) => {
    const test = agent[method](path).set('Authorization', `Bearer ${user.token}`);
    return user.ip ? test.set('X-Forwarded-For', user.ip) : test;
  };
  return {
    get: wrap('get'),
    post: wrap('post'),
    put: wrap('put'),
    patch: wrap('patch'),
    delete: wrap('delete'),
  };
}

interface MailboxItem {
  to: string;
  text: string;
  subject: string | null;
  template: string;
}

/** Waits for the newest message to `to` in the dev mailbox and returns it. */
export async function latestMessage(
  app: Express,
  to: string,
  template?: string,
  timeoutMs = 10_000,
): Promise<MailboxItem> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request(app).get('/dev/mailbox').query({ to });
    const items = (res.body.items ?? []) as MailboxItem[];
    const found = items.find((m) => !template || m.template === template);
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(`no ${template ?? ''} message to ${to} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function codeIn(message: { text: string }): string {
  const match = /\b(\d{6})\b/.exec(message.text);
  if (!match) throw new Error(`no code in: ${message.text}`);
  return match[1];
}

export function linkIn(message: { text: string }): URL {
  const match = /(https?:\/\/\S+)/.exec(message.text);
  if (!match) throw new Error(`no link in: ${message.text}`);
  return new URL(match[1]);
}
