import type { TenantMember, TenantMemberList } from '@hwp/contracts';
import { newId } from '@hwp/platform';
import { type ApiTestService, as, signUp, startApi, type TestUser } from '#test/api-test-kit';
import { expectSchema } from '#test/openapi-schemas';
import { hex, tenantHelpers } from '#test/tenants-test-setup';

let api: ApiTestService;

beforeAll(async () => {
  api = await startApi();
});

afterAll(async () => {
  await api?.stop();
});

const { createTenant, addMember, tenantsOf, tenantWithMembers } = tenantHelpers(() => api.app);

describe('members', () => {
  it('admins invite by email (case-insensitive); existing member 409, owners only by owners', async () => {
    const [owner, admin, member, later] = await Promise.all([
      signUp(api.app),
      signUp(api.app),
      signUp(api.app),
      signUp(api.app),
    ]);
    const tenant = await createTenant(owner, { name: `Members ${hex()}` });
    const joined = await addMember(owner, tenant.id, admin, 'admin');
    expect(joined).toMatchObject({ id: tenant.id, role: 'admin' });

    // Email addresses are matched regardless of case.
    const byAdmin = await as(api.app, admin)
      .post(`/tenant/${tenant.id}/members`)
      .send({ email: member.email.toUpperCase(), role: 'member' });
    expect(byAdmin.status).toBe(202);
    expect(byAdmin.body).toMatchObject({ email: member.email, role: 'member', status: 'pending' });
    // Not a member until they accept.
    expect((await as(api.app, member).get(`/tenant/${tenant.id}`)).status).toBe(404);
    const [invitation] = (await as(api.app, member).get('/tenant-invitations')).body.items;
    expect((await as(api.app, member).post(`/tenant-invitations/${invitation.id}/accept`)).status).toBe(200);

    const again = await as(api.app, admin)
      .post(`/tenant/${tenant.id}/members`)
      .send({ email: member.email, role: 'admin' });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');

    const ownerByAdmin = await as(api.app, admin)
      .post(`/tenant/${tenant.id}/members`)
      .send({ email: later.email, role: 'owner' });
    expect(ownerByAdmin.status).toBe(403);
    expect(ownerByAdmin.body.code).toBe('forbidden');

    const byMember = await as(api.app, member)
      .post(`/tenant/${tenant.id}/members`)
      .send({ email: later.email, role: 'member' });
    expect(byMember.status).toBe(403);

    await addMember(owner, tenant.id, later, 'owner');

    // Every member sees the list, oldest membership first.
    const list = await as(api.app, member).get(`/tenant/${tenant.id}/members`);
    expect(list.status).toBe(200);
    await expectSchema(api.app, 'TenantMemberList', list.body);
    const page = list.body as TenantMemberList;
    expect(page).toMatchObject({ total: 4, page: 1, pageSize: 50 });
    expect(page.items.map((m) => [m.user_id, m.role])).toEqual([
      [owner.user.id, 'owner'],
      [admin.user.id, 'admin'],
      [member.user.id, 'member'],
      [later.user.id, 'owner'],
    ]);
    const second = await as(api.app, member).get(`/tenant/${tenant.id}/members?page=2&pageSize=3`);
    expect(second.body).toMatchObject({ total: 4, page: 2, pageSize: 3 });
    expect(second.body.items.map((m: TenantMember) => m.user_id)).toEqual([later.user.id]);

    // The new member now sees the tenant among theirs, with their role.
    const theirs = await tenantsOf(member);
    expect(theirs.items.map((t) => [t.id, t.role])).toContainEqual([tenant.id, 'member']);
  });

  it('changes roles with PATCH; only owners grant or take the owner role', async () => {
    const { owner, admin, member, tenant } = await tenantWithMembers();
    const path = (user: TestUser) => `/tenant/${tenant.id}/members/${user.user.id}`;

    const promoted = await as(api.app, admin).patch(path(member)).send({ role: 'admin' });
    expect(promoted.status).toBe(200);
    await expectSchema(api.app, 'TenantMember', promoted.body);
    expect(promoted.body).toMatchObject({ user_id: member.user.id, email: member.email, role: 'admin' });

    expect((await as(api.app, admin).patch(path(member)).send({ role: 'owner' })).status).toBe(403);
    expect((await as(api.app, admin).patch(path(owner)).send({ role: 'member' })).status).toBe(403);
    expect((await as(api.app, admin).patch(path(member)).send({ role: 'boss' })).status).toBe(400);

    const owned = await as(api.app, owner).patch(path(member)).send({ role: 'owner' });
    expect(owned.status).toBe(200);
    expect(owned.body.role).toBe('owner');
    const seen = await as(api.app, member).get(`/tenant/${tenant.id}`);
    expect(seen.body.role).toBe('owner');

    const stranger = await as(api.app, owner)
      .patch(`/tenant/${tenant.id}/members/${newId()}`)
      .send({ role: 'admin' });
    expect(stranger.status).toBe(404);
    expect(stranger.body.code).toBe('not_found');

    // A plain member cannot change roles, not even their own.
    const demoted = await as(api.app, owner).patch(path(admin)).send({ role: 'member' });
    expect(demoted.body.role).toBe('member');
    expect((await as(api.app, admin).patch(path(admin)).send({ role: 'admin' })).status).toBe(403);
  });

  it('removes members (admin+), lets anyone leave, and keeps the last owner', async () => {
    const { owner, admin, member, tenant } = await tenantWithMembers();
    const [leaver, coOwner] = await Promise.all([signUp(api.app), signUp(api.app)]);
    await addMember(owner, tenant.id, leaver, 'member');
    const path = (user: TestUser) => `/tenant/${tenant.id}/members/${user.user.id}`;

    // The last owner can neither be demoted nor removed, not even by themselves.
    const demote = await as(api.app, owner).patch(path(owner)).send({ role: 'admin' });
    expect(demote.status).toBe(409);
    expect(demote.body.code).toBe('conflict');
    expect((await as(api.app, owner).delete(path(owner))).status).toBe(409);

    expect((await as(api.app, member).delete(path(leaver))).status).toBe(403);
    expect((await as(api.app, admin).delete(path(owner))).status).toBe(403);

    const removed = await as(api.app, admin).delete(path(member));
    expect(removed.status).toBe(204);
    const gone = await as(api.app, member).get(`/tenant/${tenant.id}`);
    expect(gone.status).toBe(404);
    expect((await as(api.app, admin).delete(path(member))).status).toBe(404);

    const left = await as(api.app, leaver).delete(path(leaver));
    expect(left.status).toBe(204);
    expect((await tenantsOf(leaver)).items.map((t) => t.id)).not.toContain(tenant.id);

    const members = await as(api.app, admin).get(`/tenant/${tenant.id}/members`);
    expect(members.body.items.map((m: TenantMember) => m.user_id)).toEqual([owner.user.id, admin.user.id]);

    // With a second owner, the first may step down and then leave; the second is then the last.
    await addMember(owner, tenant.id, coOwner, 'owner');
    expect((await as(api.app, owner).patch(path(owner)).send({ role: 'admin' })).status).toBe(200);
    expect((await as(api.app, owner).delete(path(owner))).status).toBe(204);
    expect((await as(api.app, coOwner).delete(path(coOwner))).status).toBe(409);
    expect((await as(api.app, coOwner).patch(path(coOwner)).send({ role: 'member' })).status).toBe(409);
  });
});
