import { randomBytes } from 'node:crypto';
import type { AuthResponse } from '@hwp/contracts';
import type { Express } from 'express';
import request from 'supertest';

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

/**
 * How the tests boot the API host (both hosts' kits): signup confirms at once, tokens are signed with
 * the run's key (jest's global setup) and passwords are hashed at argon2's lowest cost (8 KiB, one
 * pass): a production-cost hash took 20-45 ms of CPU, and the suite signs up and logs in over a
 * thousand users. Every other setting is the production default; a test overrides any of these.
 */
export function apiTestEnv(): Record<string, string | undefined> {
  return {
    AUTH_REQUIRE_CONFIRMATION: 'false',
    JWT_PRIVATE_KEY: process.env.HWP_TEST_API_KEY,
    PASSWORD_HASH_MEMORY_KIB: '8',
    PASSWORD_HASH_ITERATIONS: '1',
  };
}

/** A signed-up user: the API host's answer plus what signed them up, and their client address. */
export interface TestUser extends AuthResponse {
  email: string;
  password: string;
  ip: string;
  token: string;
}

/**
 * The user factory: signs a user up by email on the API host (`POST /auth/signup`, confirmation
 * off in test services) and returns the session.
 */
export async function signUp(apiApp: Express, data: Record<string, string> = {}): Promise<TestUser> {
  const email = uniqueEmail();
  const password = 'correct horse battery';
  const ip = newClientIp();
  const res = await request(apiApp)
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
  const wrap = (method: 'get' | 'head' | 'post' | 'put' | 'patch' | 'delete') => (path: string) => {
    const test = agent[method](path).set('Authorization', `Bearer ${user.token}`);
    return user.ip ? test.set('X-Forwarded-For', user.ip) : test;
  };
  return {
    get: wrap('get'),
    head: wrap('head'),
    post: wrap('post'),
    put: wrap('put'),
    patch: wrap('patch'),
    delete: wrap('delete'),
  };
}

/** Supertest without any credential, with the same shape as `as(app, user)`. */
export function anonymous(app: Express): ReturnType<typeof as> {
  const agent = request(app);
  return {
    get: (path) => agent.get(path),
    head: (path) => agent.head(path),
    post: (path) => agent.post(path),
    put: (path) => agent.put(path),
    patch: (path) => agent.patch(path),
    delete: (path) => agent.delete(path),
  };
}
