import { fakeOnly } from '@hwp/platform/test-kit';
import request from 'supertest';
import { type ApiTestService, newClientIp, startApi } from './api-test-kit';
import { expectSchema } from './openapi-schemas';

/** The setup and helpers the auth module's tests share (auth-*.test.ts). */

export const PASSWORD = 'correct horse battery';

/** The API host where signup must be confirmed with the emailed code. */
export function startConfirmingApi(): Promise<ApiTestService> {
  return startApi({ AUTH_REQUIRE_CONFIRMATION: 'true' });
}

/**
 * The API host where signup confirms at once; the account-wide login ceiling is 8 failures. Expiry
 * windows are the production defaults: the cases that need one to pass move the clock
 * (withClockMovedOn).
 */
export function startOpenApi(): Promise<ApiTestService> {
  return startApi({ LOGIN_MAX_FAILURES_PER_ACCOUNT_TOTAL: '8' });
}

export function post(app: ApiTestService['app'], path: string, ip = newClientIp()) {
  return request(app).post(path).set('X-Forwarded-For', ip);
}

export async function expectAuthResponse(app: ApiTestService['app'], body: unknown) {
  await expectSchema(app, 'AuthResponse', body);
}

/**
 * Runs `check` with this process's clock moved `ms` ahead (Date only: timers and I/O run as usual,
 * and the clock keeps going from there). The API host decides expiry by that clock, so a case that
 * needs time to pass does not wait for it, and a slow machine cannot stretch or shrink the window.
 */
export async function withClockMovedOn<T>(ms: number, check: () => Promise<T>): Promise<T> {
  fakeOnly(['Date'], { advanceTimers: true });
  try {
    jest.setSystemTime(Date.now() + ms);
    return await check();
  } finally {
    jest.useRealTimers();
  }
}
