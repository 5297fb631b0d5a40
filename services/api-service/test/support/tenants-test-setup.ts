import { randomBytes } from 'node:crypto';
import type { Tenant, TenantList, TenantRole } from '@hwp/contracts';
import type { Response } from 'supertest';
import { type ApiTestService, as, signUp, type TestUser } from './api-test-kit';
import { joinTenant } from './factories';
import { expectSchema } from './openapi-schemas';

/** The helpers the tenants module's tests share (tenants-*.test.ts). */

export const hex = () => randomBytes(4).toString('hex');

/**
 * The tenant helpers, against the API host `app()` answers (each test file starts its own, so it is
 * read when a helper runs, not when the helpers are made).
 */
export function tenantHelpers(app: () => ApiTestService['app']) {
  async function createTenant(user: TestUser, body: { name: string; slug?: string }): Promise<Tenant> {
    const res = await as(app(), user).post('/tenant/create').send(body);
    expect(res.status).toBe(201);
    await expectSchema(app(), 'Tenant', res.body);
    return res.body as Tenant;
  }

  const addMember = (actor: TestUser, tenantId: string, member: TestUser, role: TenantRole) =>
    joinTenant(app(), actor, tenantId, member, role);

  async function tenantsOf(user: TestUser): Promise<TenantList> {
    const res = await as(app(), user).get('/tenants');
    expect(res.status).toBe(200);
    await expectSchema(app(), 'TenantList', res.body);
    return res.body as TenantList;
  }

  async function currentTenant(user: TestUser, header?: string): Promise<Response> {
    const req = as(app(), user).get('/tenant/current');
    return header === undefined ? req : req.set('X-Tenant-ID', header);
  }

  /** A user's tenant with a few members besides the owner, so lists have content. */
  async function tenantWithMembers() {
    const [owner, admin, member] = await Promise.all([signUp(app()), signUp(app()), signUp(app())]);
    const tenant = await createTenant(owner, { name: `Team ${hex()}` });
    await addMember(owner, tenant.id, admin, 'admin');
    await addMember(owner, tenant.id, member, 'member');
    return { owner, admin, member, tenant };
  }

  return { createTenant, addMember, tenantsOf, currentTenant, tenantWithMembers };
}
