import type { TenantList, TenantMemberList } from '@hwp/contracts';
import { newId } from '@hwp/platform';
import { type ApiTestService, as, signUp, startApi } from '#test/api-test-kit';
import { expectSchema } from '#test/openapi-schemas';
import { expectTenantIsolation } from '#test/tenant-isolation';
import { hex, tenantHelpers } from '#test/tenants-test-setup';
import { UserEntity } from '../auth/user.entity';
import { TenantMemberEntity } from '../tenancy/tenant.entity';
import { isTenantOwned, TenantScope } from '../tenancy/tenant-scope';

let api: ApiTestService;

beforeAll(async () => {
  api = await startApi();
});

afterAll(async () => {
  await api?.stop();
});

const { createTenant, addMember, tenantsOf, currentTenant, tenantWithMembers } = tenantHelpers(() => api.app);

describe('tenant resolution (X-Tenant-ID, else the default tenant, else the first joined)', () => {
  it('answers 403 when X-Tenant-ID names a tenant the caller is not in, and 400 when it is malformed', async () => {
    const [user, other] = await Promise.all([signUp(api.app), signUp(api.app)]);
    const [theirs] = (await tenantsOf(other)).items;
    const mine = await createTenant(user, { name: `Mine ${hex()}` });

    const foreign = await currentTenant(user, theirs.id);
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe('forbidden');
    // A tenant that does not exist answers the same (existence is not revealed).
    const missing = await currentTenant(user, newId());
    expect(missing.status).toBe(403);
    expect(missing.body.detail).toBe(foreign.body.detail);

    for (const bad of ['not-a-uuid', '', `${mine.id}x`]) {
      const res = await currentTenant(user, bad);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors).toEqual([expect.objectContaining({ field: 'X-Tenant-ID' })]);
    }

    const named = await currentTenant(user, mine.id.toUpperCase());
    expect(named.status).toBe(200);
    await expectSchema(api.app, 'Tenant', named.body);
    expect(named.body).toMatchObject({ id: mine.id, role: 'owner' });
    expect(named.headers['x-tenant-id']).toBe(mine.id);
  });

  it('uses the default tenant without the header; PUT /profile changes it, only to a tenant of the caller', async () => {
    const [user, other] = await Promise.all([signUp(api.app), signUp(api.app)]);
    const [personal] = (await tenantsOf(user)).items;
    const [theirs] = (await tenantsOf(other)).items;

    const initial = await currentTenant(user);
    expect(initial.status).toBe(200);
    expect(initial.body.id).toBe(personal.id);
    expect(initial.headers['x-tenant-id']).toBe(personal.id);

    // Creating a tenant does not switch to it.
    const team = await createTenant(user, { name: `Team ${hex()}` });
    expect((await currentTenant(user)).body.id).toBe(personal.id);

    const switched = await as(api.app, user).put('/profile').send({ default_tenant_id: team.id });
    expect(switched.status).toBe(200);
    await expectSchema(api.app, 'Profile', switched.body);
    expect(switched.body.default_tenant_id).toBe(team.id);
    const now = await currentTenant(user);
    expect(now.body.id).toBe(team.id);
    expect(now.headers['x-tenant-id']).toBe(team.id);

    const foreign = await as(api.app, user).put('/profile').send({ default_tenant_id: theirs.id });
    expect(foreign.status).toBe(400);
    expect(foreign.body.code).toBe('validation_failed');
    expect(foreign.body.errors).toEqual([expect.objectContaining({ field: 'default_tenant_id' })]);
    expect((await as(api.app, user).get('/profile')).body.default_tenant_id).toBe(team.id);

    // Clearing the default falls back to the first tenant joined.
    const cleared = await as(api.app, user).put('/profile').send({ default_tenant_id: null });
    expect(cleared.body.default_tenant_id).toBeNull();
    expect((await currentTenant(user)).body.id).toBe(personal.id);
  });

  it('falls back to the first tenant joined once the user leaves their default tenant', async () => {
    const [user, other] = await Promise.all([signUp(api.app), signUp(api.app)]);
    const [personal] = (await tenantsOf(user)).items;
    const first = await createTenant(other, { name: `First ${hex()}` });
    const second = await createTenant(other, { name: `Second ${hex()}` });
    await addMember(other, first.id, user, 'member');
    await addMember(other, second.id, user, 'admin');

    // The personal tenant is the default; give it another owner so the user may leave it.
    await addMember(user, personal.id, other, 'owner');
    expect((await as(api.app, user).delete(`/tenant/${personal.id}/members/${user.user.id}`)).status).toBe(
      204,
    );

    const res = await currentTenant(user);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: first.id, role: 'member' });
    expect(res.headers['x-tenant-id']).toBe(first.id);
    const profile = await as(api.app, user).get('/profile');
    expect(profile.body.default_tenant_id).toBeNull();
    expect(profile.body.tenants.map((t: { id: string }) => t.id)).toEqual([first.id, second.id]);
  });

  it('gives a user removed from every tenant a new personal tenant, once', async () => {
    const [user, other] = await Promise.all([signUp(api.app, { first_name: 'Solo' }), signUp(api.app)]);
    const [personal] = (await tenantsOf(user)).items;
    await addMember(user, personal.id, other, 'owner');
    expect((await as(api.app, other).delete(`/tenant/${personal.id}/members/${user.user.id}`)).status).toBe(
      204,
    );

    // Concurrent first requests must agree on one new tenant.
    const answers = await Promise.all([currentTenant(user), currentTenant(user), currentTenant(user)]);
    for (const res of answers) expect(res.status).toBe(200);
    const ids = new Set(answers.map((res) => res.body.id));
    expect(ids.size).toBe(1);
    const [fresh] = ids;
    expect(fresh).not.toBe(personal.id);
    expect(answers[0].body).toMatchObject({ name: 'Solo (personal)', role: 'owner' });

    const list = await tenantsOf(user);
    expect(list.items.map((t) => t.id)).toEqual([fresh]);
    expect((await as(api.app, user).get('/profile')).body.default_tenant_id).toBe(fresh);
  });
});

describe('tenant isolation', () => {
  it('keeps a tenant and its members invisible and untouchable to users of other tenants', async () => {
    const { owner, member, tenant } = await tenantWithMembers();
    const [outsider, outsiderMate] = await Promise.all([signUp(api.app), signUp(api.app)]);
    const [outsiderTenant] = (await tenantsOf(outsider)).items;
    await addMember(outsider, outsiderTenant.id, outsiderMate, 'member');

    await expectTenantIsolation(api.app, {
      owner,
      outsider,
      tenantId: tenant.id,
      resourceId: tenant.id,
      reads: [`/tenant/${tenant.id}`, `/tenant/${tenant.id}/members`],
      writes: [{ method: 'put', path: `/tenant/${tenant.id}`, body: { name: 'Taken over', settings: {} } }],
      lists: [{ path: '/tenants', ids: (body: TenantList) => body.items.map((t) => t.id) }],
    });

    await expectTenantIsolation(api.app, {
      owner,
      outsider,
      tenantId: tenant.id,
      resourceId: member.user.id,
      reads: [`/tenant/${tenant.id}/members`],
      writes: [
        {
          method: 'post',
          path: `/tenant/${tenant.id}/members`,
          body: { email: outsider.email, role: 'owner' },
        },
        { method: 'patch', path: `/tenant/${tenant.id}/members/${member.user.id}`, body: { role: 'owner' } },
        { method: 'delete', path: `/tenant/${tenant.id}/members/${member.user.id}` },
      ],
      lists: [
        {
          path: `/tenant/${outsiderTenant.id}/members`,
          ids: (body: TenantMemberList) => body.items.map((m) => m.user_id),
        },
      ],
    });
  });

  it('shuts a removed member out of the tenant they left', async () => {
    const { owner, admin, member, tenant } = await tenantWithMembers();
    expect((await as(api.app, admin).delete(`/tenant/${tenant.id}/members/${member.user.id}`)).status).toBe(
      204,
    );

    await expectTenantIsolation(api.app, {
      owner,
      outsider: member,
      tenantId: tenant.id,
      resourceId: tenant.id,
      reads: [`/tenant/${tenant.id}`, `/tenant/${tenant.id}/members`],
      writes: [
        { method: 'patch', path: `/tenant/${tenant.id}/members/${member.user.id}`, body: { role: 'admin' } },
      ],
      lists: [{ path: '/tenants', ids: (body: TenantList) => body.items.map((t) => t.id) }],
    });
  });
  it('the isolation check fails when the "outsider" can in fact see the tenant', async () => {
    const { owner, member, tenant } = await tenantWithMembers();
    const spec = {
      owner,
      tenantId: tenant.id,
      resourceId: tenant.id,
      reads: [`/tenant/${tenant.id}`],
      lists: [{ path: '/tenants', ids: (body: TenantList) => body.items.map((t) => t.id) }],
    };
    await expect(expectTenantIsolation(api.app, { ...spec, outsider: member })).rejects.toThrow(
      /expected 404 not_found: GET \/tenant\/.* -> 200/,
    );
    await expect(expectTenantIsolation(api.app, { ...spec, outsider: member, reads: [] })).rejects.toThrow(
      /leaks into GET \/tenants\?page=1/,
    );
  });
});

describe('tenant-owned data', () => {
  it('registers every entity with a tenant_id column as tenant-owned', () => {
    const owned = api.deps.dataSource.entityMetadatas.filter((meta) =>
      meta.columns.some((column) => column.databaseName === 'tenant_id'),
    );
    expect(owned.map((meta) => meta.tableName)).toContain('tenant_members');
    for (const meta of owned) {
      expect({ table: meta.tableName, tenantOwned: isTenantOwned(meta.target) }).toEqual({
        table: meta.tableName,
        tenantOwned: true,
      });
    }
  });

  it('a tenant scope reaches only its own tenant’s rows and refuses entities that are not tenant-owned', async () => {
    const { owner, member, tenant } = await tenantWithMembers();
    const [elsewhere] = (await tenantsOf(owner)).items;
    const manager = api.deps.dataSource.manager;

    const foreign = new TenantScope(manager, elsewhere.id).repo(TenantMemberEntity);
    expect(await foreign.findOne({ userId: member.user.id })).toBeNull();
    expect(await foreign.update({ userId: member.user.id }, { role: 'owner' })).toBe(0);
    expect(await foreign.delete({ userId: member.user.id })).toBe(0);

    const own = new TenantScope(manager, tenant.id).repo(TenantMemberEntity);
    expect(await own.findOne({ userId: member.user.id })).toMatchObject({ role: 'member' });
    expect(() => new TenantScope(manager, tenant.id).repo(UserEntity as never)).toThrow(/tenant-owned/);
  });
});
