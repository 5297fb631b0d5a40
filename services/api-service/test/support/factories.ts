import { randomBytes } from 'node:crypto';
import type { FileRecord, Tenant, TenantInvitation, TenantRole } from '@hwp/contracts';
import type request from 'supertest';
import { type ApiTestService, as, signUp, type TestUser } from './api-test-kit';

/**
 * Factories of the API host's records, through its public HTTP API (the same checks and events a
 * client meets): a test states what it needs, not how rows are laid out. Users: `signUp`.
 */

/**
 * Makes `member` a member of the tenant the way a person becomes one: `actor` invites their address,
 * they find the invitation in their own list and accept it. Returns the joined tenant.
 */
export async function joinTenant(
  app: ApiTestService['app'],
  actor: TestUser,
  tenantId: string,
  member: TestUser,
  role: TenantRole,
): Promise<Tenant> {
  const invited = await as(app, actor)
    .post(`/tenant/${tenantId}/members`)
    .send({ email: member.email, role });
  expect(invited.status).toBe(202);
  const mine = await as(app, member).get('/tenant-invitations');
  expect(mine.status).toBe(200);
  const invitation = (mine.body.items as TenantInvitation[]).find((i) => i.tenant_id === tenantId);
  expect(invitation).toBeDefined();
  const accepted = await as(app, member).post(`/tenant-invitations/${invitation?.id}/accept`);
  expect(accepted.status).toBe(200);
  return accepted.body as Tenant;
}

/** A team tenant: the owner and a plain member, both signed up. */
export async function team(
  api: ApiTestService,
): Promise<{ owner: TestUser; member: TestUser; tenant: Tenant }> {
  const [owner, member] = await Promise.all([signUp(api.app), signUp(api.app)]);
  const created = await as(api.app, owner)
    .post('/tenant/create')
    .send({ name: `Team ${randomBytes(3).toString('hex')}` });
  expect(created.status).toBe(201);
  const tenant = created.body as Tenant;
  await joinTenant(api.app, owner, tenant.id, member, 'member');
  return { owner, member, tenant };
}

/** Uploads `content` as `name` (fields as form fields); expects `status` and returns the body. */
export async function upload(
  client: { post: (path: string) => request.Test },
  name: string,
  content: Buffer | string,
  fields: Record<string, string> = {},
  status = 201,
): Promise<FileRecord> {
  let req = client.post('/files/upload');
  for (const [key, value] of Object.entries(fields)) req = req.field(key, value);
  const res = await req.attach('file', Buffer.from(content), name);
  if (res.status !== status) throw new Error(`upload ${name}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as FileRecord;
}
