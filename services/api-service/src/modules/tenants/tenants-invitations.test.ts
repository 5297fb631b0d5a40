import type { FileRecord, Tenant, TenantInvitation } from '@hwp/contracts';
import request from 'supertest';
import {
  type ApiTestService,
  as,
  codeIn,
  latestMessage,
  newClientIp,
  startApi,
  type TestUser,
  uniqueEmail,
} from '#test/api-test-kit';
import { upload } from '#test/factories';
import { expectSchema } from '#test/openapi-schemas';
import { hex, tenantHelpers } from '#test/tenants-test-setup';

// Membership by consent (issue 34, finding 1), on a host that makes sign-ups confirm their address
// first, as production does: an unconfirmed account is exactly what a stranger could capture.
let api: ApiTestService;

beforeAll(async () => {
  // One test signs an address up twice (a takeover): a second code may go out a second later.
  api = await startApi({ AUTH_REQUIRE_CONFIRMATION: 'true', OTP_RESEND_INTERVAL_SECONDS: '1' });
});

afterAll(async () => {
  await api?.stop();
});

const { createTenant, tenantsOf, currentTenant } = tenantHelpers(() => api.app);
const PASSWORD = 'correct horse battery';

function signup(email: string, password = PASSWORD) {
  return request(api.app)
    .post('/auth/signup')
    .set('X-Forwarded-For', newClientIp())
    .send({ email, password })
    .expect(200);
}

/** The newest signup code mailed to the address (waiting for one other than `not`). */
async function signupCode(email: string, not?: string): Promise<string> {
  for (;;) {
    const code = codeIn(await latestMessage(api.app, email, 'signup'));
    if (code !== not) return code;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Redeems the newest signup code of the address: the account is confirmed and signed in. */
async function confirm(email: string, previousCode?: string): Promise<TestUser> {
  const ip = newClientIp();
  const code = await signupCode(email, previousCode);
  const res = await request(api.app)
    .post('/auth/verify')
    .set('X-Forwarded-For', ip)
    .send({ type: 'signup', email, token: code })
    .expect(200);
  return { ...res.body, email, password: PASSWORD, ip, token: res.body.session.access_token };
}

async function confirmedUser(prefix = 'user'): Promise<TestUser> {
  const email = uniqueEmail(prefix);
  await signup(email);
  return confirm(email);
}

function invite(actor: TestUser, tenantId: string, email: string, role = 'member') {
  return as(api.app, actor).post(`/tenant/${tenantId}/members`).send({ email, role });
}

/** The token of the newest invitation mailed to the address (waiting for one other than `not`). */
async function invitationToken(email: string, not?: string): Promise<string> {
  for (;;) {
    const message = await latestMessage(api.app, email, 'tenant-invitation');
    const match = /token=([A-Za-z0-9_-]+)/.exec(message.text);
    if (!match) throw new Error(`no invitation token in: ${message.text}`);
    if (match[1] !== not) return decodeURIComponent(match[1]);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The keys of an answer, with the types of their values (what an observer can compare). */
function shapeOf(body: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, v === null ? 'null' : typeof v]));
}

describe('tenant capture (a stranger adds an address that has not confirmed yet)', () => {
  test('the victim confirms and works in their own tenant; the stranger sees nothing of it', async () => {
    const stranger = await confirmedUser('stranger');
    const trap = await createTenant(stranger, { name: `Trap ${hex()}` });

    const victimEmail = uniqueEmail('victim');
    await signup(victimEmail); // signed up, not confirmed
    const added = await invite(stranger, trap.id, victimEmail);
    const unknown = await invite(stranger, trap.id, uniqueEmail('nobody'));
    // The same answer whether or not an account uses the address (no enumeration).
    expect([added.status, unknown.status]).toEqual([202, 202]);
    await expectSchema(api.app, 'TenantInvitation', added.body);
    expect(shapeOf(added.body)).toEqual(shapeOf(unknown.body));
    expect(added.body).toMatchObject({ tenant_id: trap.id, email: victimEmail, status: 'pending' });

    const victim = await confirm(victimEmail);
    const current = await currentTenant(victim);
    expect(current.status).toBe(200);
    expect(current.body.id).not.toBe(trap.id);
    expect(current.body).toMatchObject({ role: 'owner', created_by: victim.user.id });
    expect((await tenantsOf(victim)).items.map((t) => t.id)).toEqual([current.body.id]);

    // The first upload lands in the victim's own tenant, out of the stranger's reach.
    const file: FileRecord = await upload(as(api.app, victim), 'secret.txt', 'design notes');
    expect(file.tenant_id).toBe(current.body.id);
    const strangerFiles = await as(api.app, stranger).get('/files').set('X-Tenant-ID', trap.id);
    expect(strangerFiles.status).toBe(200);
    expect(strangerFiles.body.items).toEqual([]);
    expect((await as(api.app, stranger).get(`/files/${file.id}`)).status).toBe(404);
    const members = await as(api.app, stranger).get(`/tenant/${trap.id}/members`);
    expect(members.body.items.map((m: { user_id: string }) => m.user_id)).toEqual([stranger.user.id]);

    // The victim sees the invitation and may still decline it; nothing changes.
    const mine = await as(api.app, victim).get('/tenant-invitations');
    expect(mine.status).toBe(200);
    await expectSchema(api.app, 'TenantInvitationList', mine.body);
    expect(mine.body.items).toMatchObject([
      { tenant_id: trap.id, tenant_name: trap.name, status: 'pending' },
    ]);
    const declined = await as(api.app, victim)
      .post('/tenant-invitations/decline')
      .send({ token: await invitationToken(victimEmail) });
    expect(declined.status).toBe(200);
    expect(declined.body.status).toBe('declined');
    expect((await tenantsOf(victim)).items.map((t) => t.id)).toEqual([current.body.id]);
    expect((await as(api.app, victim).get('/tenant-invitations')).body.items).toEqual([]);
  });

  test('an address the stranger signed up themselves: its real owner still lands in their own tenant', async () => {
    const stranger = await confirmedUser('stranger');
    const trap = await createTenant(stranger, { name: `Trap ${hex()}` });
    const victimEmail = uniqueEmail('victim');
    await signup(victimEmail, 'stranger knows this one');
    expect((await invite(stranger, trap.id, victimEmail)).status).toBe(202);

    // The real owner signs up (taking over the unconfirmed account) and confirms.
    const strangersCode = await signupCode(victimEmail);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await signup(victimEmail);
    const victim = await confirm(victimEmail, strangersCode);
    const current = await currentTenant(victim);
    expect(current.body.id).not.toBe(trap.id);
    expect(current.body.role).toBe('owner');
    const file = await upload(as(api.app, victim), 'mine.txt', 'private');
    expect(file.tenant_id).toBe(current.body.id);
    expect((await as(api.app, stranger).get(`/files/${file.id}`)).status).toBe(404);
  });
});

describe('invitations', () => {
  test('accepting by the emailed token makes the addressee a member with the invited role', async () => {
    const [owner, invitee] = await Promise.all([confirmedUser('owner'), confirmedUser('invitee')]);
    const tenant = await createTenant(owner, { name: `Team ${hex()}` });
    const ownTenant = (await currentTenant(invitee)).body.id;
    expect((await invite(owner, tenant.id, invitee.email.toUpperCase(), 'admin')).status).toBe(202);
    const message = await latestMessage(api.app, invitee.email, 'tenant-invitation');
    expect(message.text).toContain(tenant.name);

    const accepted = await as(api.app, invitee)
      .post('/tenant-invitations/accept')
      .send({ token: await invitationToken(invitee.email) });
    expect(accepted.status).toBe(200);
    await expectSchema(api.app, 'Tenant', accepted.body);
    expect(accepted.body).toMatchObject({ id: tenant.id, role: 'admin' });
    const tenants = (await tenantsOf(invitee)).items.map((t: Tenant) => [t.id, t.role]);
    expect(tenants).toEqual([
      [ownTenant, 'owner'],
      [tenant.id, 'admin'],
    ]);
    // Joining does not move the working tenant.
    expect((await currentTenant(invitee)).body.id).toBe(ownTenant);

    // Used once.
    const again = await as(api.app, invitee)
      .post('/tenant-invitations/accept')
      .send({ token: await invitationToken(invitee.email) });
    expect(again.status).toBe(404);
    const listed = await as(api.app, owner).get(`/tenant/${tenant.id}/invitations`);
    expect(listed.status).toBe(200);
    await expectSchema(api.app, 'TenantInvitationList', listed.body);
    expect(listed.body.items).toMatchObject([{ email: invitee.email, role: 'admin', status: 'accepted' }]);
    expect((await invite(owner, tenant.id, invitee.email)).status).toBe(409);
  });

  test('an invitation dies when its sender is removed from the tenant', async () => {
    const [owner, admin, friend, other] = await Promise.all(
      ['owner', 'admin', 'friend', 'other'].map((prefix) => confirmedUser(prefix)),
    );
    const tenant = await createTenant(owner, { name: `Team ${hex()}` });
    expect((await invite(owner, tenant.id, admin.email, 'admin')).status).toBe(202);
    await as(api.app, admin)
      .post('/tenant-invitations/accept')
      .send({ token: await invitationToken(admin.email) })
      .expect(200);
    // The admin invites a friend and another as admins, and is then removed.
    expect((await invite(admin, tenant.id, friend.email, 'admin')).status).toBe(202);
    expect((await invite(admin, tenant.id, other.email, 'member')).status).toBe(202);
    const [friendToken, otherToken] = await Promise.all([
      invitationToken(friend.email),
      invitationToken(other.email),
    ]);
    await as(api.app, owner).delete(`/tenant/${tenant.id}/members/${admin.user.id}`).expect(204);
    for (const [user, token] of [
      [friend, friendToken],
      [other, otherToken],
    ] as const) {
      const accepted = await as(api.app, user).post('/tenant-invitations/accept').send({ token });
      expect(accepted.status).toBe(404);
    }
    const members = (await as(api.app, owner).get(`/tenant/${tenant.id}/members`).expect(200)).body;
    expect(JSON.stringify(members)).not.toContain(friend.user.id);
  });

  test('only the addressee can use an invitation; withdrawn, replaced and expired ones are dead', async () => {
    const [owner, admin, invitee, other] = await Promise.all([
      confirmedUser('owner'),
      confirmedUser('admin'),
      confirmedUser('invitee'),
      confirmedUser('other'),
    ]);
    const tenant = await createTenant(owner, { name: `Team ${hex()}` });
    await invite(owner, tenant.id, admin.email, 'admin');
    const adminToken = await invitationToken(admin.email);
    expect(
      (await as(api.app, admin).post('/tenant-invitations/accept').send({ token: adminToken })).status,
    ).toBe(200);

    // Roles: admins invite, only owners invite owners, members see no invitations.
    expect((await invite(admin, tenant.id, invitee.email, 'owner')).status).toBe(403);
    expect((await invite(invitee, tenant.id, other.email)).status).toBe(404);
    expect((await invite(admin, tenant.id, invitee.email, 'member')).status).toBe(202);
    const firstToken = await invitationToken(invitee.email);

    // Somebody else holding the token (forwarded mail) cannot use it, nor the id.
    expect(
      (await as(api.app, other).post('/tenant-invitations/accept').send({ token: firstToken })).status,
    ).toBe(404);
    const [pending] = (await as(api.app, invitee).get('/tenant-invitations')).body
      .items as TenantInvitation[];
    expect((await as(api.app, other).post(`/tenant-invitations/${pending.id}/accept`)).status).toBe(404);

    // A second invitation replaces the first: the first token is dead, the role is the new one.
    expect((await invite(admin, tenant.id, invitee.email, 'admin')).status).toBe(202);
    const secondToken = await invitationToken(invitee.email, firstToken);
    expect(
      (await as(api.app, invitee).post('/tenant-invitations/accept').send({ token: firstToken })).status,
    ).toBe(404);

    // Withdrawn: dead too.
    const [current] = (await as(api.app, invitee).get('/tenant-invitations')).body
      .items as TenantInvitation[];
    expect(current.role).toBe('admin');
    expect((await as(api.app, admin).delete(`/tenant/${tenant.id}/invitations/${current.id}`)).status).toBe(
      204,
    );
    expect((await as(api.app, admin).delete(`/tenant/${tenant.id}/invitations/${current.id}`)).status).toBe(
      409,
    );
    expect(
      (await as(api.app, invitee).post('/tenant-invitations/accept').send({ token: secondToken })).status,
    ).toBe(404);
    expect((await as(api.app, invitee).get('/tenant-invitations')).body.items).toEqual([]);

    // Expired: listed as expired to the admins, refused to the addressee.
    expect((await invite(owner, tenant.id, invitee.email)).status).toBe(202);
    const expiring = await invitationToken(invitee.email, secondToken);
    await api.deps.dataSource.query(
      `UPDATE tenant_invitations SET expires_at = now() - interval '1 second'
        WHERE tenant_id = $1 AND email = $2 AND status = 'pending'`,
      [tenant.id, invitee.email],
    );
    expect(
      (await as(api.app, invitee).post('/tenant-invitations/accept').send({ token: expiring })).status,
    ).toBe(404);
    const listed = await as(api.app, owner).get(`/tenant/${tenant.id}/invitations`);
    expect(listed.body.items[0]).toMatchObject({ email: invitee.email, status: 'expired' });
    expect((await as(api.app, invitee).get(`/tenant/${tenant.id}/invitations`)).status).toBe(404);
    expect((await tenantsOf(invitee)).items.map((t) => t.id)).not.toContain(tenant.id);
  });
});
