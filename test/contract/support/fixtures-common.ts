import type request from 'supertest';
import type { TestUser } from '#collab-test/collab-test-kit';
import type { Role } from '../service-interface.rows';

/** The users the rows are sent as, by role (filled in by the fixtures). */
export type Users = Record<Exclude<Role, 'anonymous'>, TestUser>;

/** A fixture request's answer, or an error naming the fixture when it was not accepted. */
export function expectOk(res: request.Response, what: string, status?: number): request.Response {
  const ok = status ? res.status === status : res.status >= 200 && res.status < 300;
  if (!ok) throw new Error(`fixture ${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}
