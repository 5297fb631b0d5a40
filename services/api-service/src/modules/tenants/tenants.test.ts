import { randomBytes } from 'node:crypto';
import type { Profile, Tenant, TenantList, TenantMember, TenantMemberList, TenantRole } from '@hwp/contracts';
import { newId } from '@hwp/platform';
import {
  type ApiTestService,
  as,
  signUp,
  startApi,
  type TestUser,
  uniqueEmail,
} from '../../../test/support/api-test-kit';
import { expectSchema } from '../../../test/support/openapi-schemas';
import { expectTenantIsolation } from '../../../test/support/tenant-isolation';
import { UserEntity } from '../auth/user.entity';
import { TenantMemberEntity } from './tenant.entity';
import { isTenantOwned, TenantScope } from './tenant-scope';

let api: ApiTestService;

beforeAll(async () => {
  api = await startApi();
});

afterAll(async () => {
  await api?.stop();
});

const hex = () => randomBytes(4).toString('hex');

async function createTenant(user: TestUser, body: { name: string; slug?: string }): Promise<Tenant> {
  const res = await as(api.app, user).post('/tenant/create').send(body);
  expect(res.status).toBe(201);
  await expectSchema(api.app, 'Tenant', res.body);
  return res.body as Tenant;
}

async function addMember(actor: TestUser, tenantId: string, member: TestUser, role: TenantRole) {
  const res = await as(api.app, actor)
    .post(`/tenant/${tenantId}/members`)
    .send({ email: member.email, role });
  expect(res.status).toBe(201);
  return res.body as TenantMember;
}

async function tenantsOf(user: TestUser): Promise<TenantList> {
  const res = await as(api.app, user).get('/tenants');
  expect(res.status).toBe(200);
  await expectSchema(api.app, 'TenantList', res.body);
  return res.body as TenantList;
}

async function currentTenant(user: TestUser, header?: string) {
  const req = as(api.app, user).get('/tenant/current');
  return header === undefined ? req : req.set('X-Tenant-ID', header);
}

/** A user's tenant with a few members besides the owner, so lists have content. */
async function tenantWithMembers() {
  const [owner, admin, member] = await Promise.all([signUp(api.app), signUp(api.app), signUp(api.app)]);
  const tenant = await createTenant(owner, { name: `Team ${hex()}` });
  await addMember(owner, tenant.id, admin, 'admin');
  await addMember(owner, tenant.id, member, 'member');
  return { owner, admin, member, tenant };
}

describe('signup and profile', () => {
  it('gives a new user a personal tenant they own, listed with their role', async () => {
    const user = await signUp(api.app, { first_name: 'Ada', last_name: 'Lovelace' });
    const list = await tenantsOf(user);
    expect(list).toMatchObject({ total: 1, page: 1, pageSize: 50 });
    expect(list.items[0]).toMatchObject({ name: 'Ada (personal)', role: 'owner', created_by: user.user.id });
  });

  it('GET /profile answers exactly the documented fields with the tenants and the default one', async () => {
    const user = await signUp(api.app, { first_name: 'Grace' });
    const [personal] = (await tenantsOf(user)).items;
    const res = await as(api.app, user).get('/profile');
    expect(res.status).toBe(200);
    await expectSchema(api.app, 'Profile', res.body);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'id',
        'email',
        'phone',
        'first_name',
        'last_name',
        'avatar_url',
        'default_tenant_id',
        'tenants',
      ].sort(),
    );
    expect(res.body).toEqual({
      id: user.user.id,
      email: user.email,
      phone: '',
      first_name: 'Grace',
      last_name: null,
      avatar_url: null,
      default_tenant_id: personal.id,
      tenants: [{ id: personal.id, name: personal.name, role: 'owner' }],
    } satisfies Profile);
    expect(Object.keys(res.body.tenants[0]).sort()).toEqual(['id', 'name', 'role']);
  });

  it('PUT /profile changes names and avatar, and null clears them', async () => {
    const user = await signUp(api.app, { first_name: 'Old' });
    const set = await as(api.app, user)
      .put('/profile')
      .send({ first_name: 'New', last_name: 'Name', avatar_url: 'https://example.test/a.png' });
    expect(set.status).toBe(200);
    await expectSchema(api.app, 'Profile', set.body);
    expect(set.body).toMatchObject({
      first_name: 'New',
      last_name: 'Name',
      avatar_url: 'https://example.test/a.png',
    });
    const cleared = await as(api.app, user).put('/profile').send({ last_name: null, avatar_url: null });
    expect(cleared.body).toMatchObject({ first_name: 'New', last_name: null, avatar_url: null });
  });
});

describe('creating and updating tenants', () => {
  it('makes the creator owner and derives the slug from the name', async () => {
    const user = await signUp(api.app);
    const tag = hex();
    const tenant = await createTenant(user, { name: `  Café Robotics ${tag}!  ` });
    expect(tenant).toMatchObject({
      name: `Café Robotics ${tag}!`,
      slug: `cafe-robotics-${tag}`,
      settings: {},
      role: 'owner',
      created_by: user.user.id,
    });

    // Joined last, so listed last; GET /tenant/:id shows the same tenant.
    const list = await tenantsOf(user);
    expect(list.total).toBe(2);
    expect(list.items[1]).toEqual(tenant);
    const got = await as(api.app, user).get(`/tenant/${tenant.id}`);
    expect(got.status).toBe(200);
    await expectSchema(api.app, 'Tenant', got.body);
    expect(got.body).toEqual(tenant);
  });

  it('refuses a taken slug with 409 and an invalid one with 400, and suffixes a derived one', async () => {
    const [first, second] = await Promise.all([signUp(api.app), signUp(api.app)]);
    const slug = `acme-${hex()}`;
    await createTenant(first, { name: 'Acme', slug });

    const taken = await as(api.app, second).post('/tenant/create').send({ name: 'Other', slug });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('conflict');

    for (const bad of ['Upper-Case', 'a', 'double--dash', '-lead', 'with space']) {
      const res = await as(api.app, second).post('/tenant/create').send({ name: 'Bad', slug: bad });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'slug' })]));
    }
    for (const body of [{ slug: `x-${hex()}` }, { name: '   ' }]) {
      const noName = await as(api.app, second).post('/tenant/create').send(body);
      expect(noName.status).toBe(400);
      expect(noName.body.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: 'name' })]),
      );
    }

    // A name whose slug is taken gets a free variant instead of a conflict.
    const derived = await createTenant(second, { name: slug });
    expect(derived.slug).toMatch(new RegExp(`^${slug}-[0-9a-f]{8}$`));
    expect((await tenantsOf(second)).total).toBe(2);
  });

  it('lets admins change name, slug and settings, and answers 403 to plain members', async () => {
    const { owner, admin, member, tenant } = await tenantWithMembers();
    const other = await createTenant(owner, { name: `Other ${hex()}` });

    const denied = await as(api.app, member).put(`/tenant/${tenant.id}`).send({ name: 'Mine now' });
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe('forbidden');

    const slug = `renamed-${hex()}`;
    const res = await as(api.app, admin)
      .put(`/tenant/${tenant.id}`)
      .send({ name: 'Renamed', slug, settings: { units: 'mm', locale: { lang: 'de' } } });
    expect(res.status).toBe(200);
    await expectSchema(api.app, 'Tenant', res.body);
    expect(res.body).toMatchObject({ id: tenant.id, name: 'Renamed', slug, role: 'admin' });

    const stored = await as(api.app, member).get(`/tenant/${tenant.id}`);
    expect(stored.body).toMatchObject({
      name: 'Renamed',
      slug,
      settings: { units: 'mm', locale: { lang: 'de' } },
      role: 'member',
      created_at: tenant.created_at,
    });
    expect(Date.parse(stored.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(tenant.updated_at));

    // Settings are replaced as a whole; fields not sent stay.
    const replaced = await as(api.app, owner)
      .put(`/tenant/${tenant.id}`)
      .send({ settings: { units: 'in' } });
    expect(replaced.body).toMatchObject({ name: 'Renamed', slug, settings: { units: 'in' } });

    const clash = await as(api.app, owner).put(`/tenant/${other.id}`).send({ slug });
    expect(clash.status).toBe(409);
    const blank = await as(api.app, owner).put(`/tenant/${tenant.id}`).send({ name: ' \t ' });
    expect(blank.status).toBe(400);
    expect(blank.body.errors).toEqual([expect.objectContaining({ field: 'name' })]);
    const invalid = await as(api.app, owner).put(`/tenant/${tenant.id}`).send({ slug: 'Not A Slug' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors).toEqual([expect.objectContaining({ field: 'slug' })]);
  });
});

describe('members', () => {
  it('admins add existing accounts by email; unknown email 404, existing member 409, owners only by owners', async () => {
    const [owner, admin, member, later] = await Promise.all([
      signUp(api.app),
      signUp(api.app),
      signUp(api.app),
      signUp(api.app),
    ]);
    const tenant = await createTenant(owner, { name: `Members ${hex()}` });
    const added = await addMember(owner, tenant.id, admin, 'admin');
    await expectSchema(api.app, 'TenantMember', added);
    expect(added).toMatchObject({ user_id: admin.user.id, email: admin.email, role: 'admin' });

    // Email addresses are matched regardless of case.
    const byAdmin = await as(api.app, admin)
      .post(`/tenant/${tenant.id}/members`)
      .send({ email: member.email.toUpperCase(), role: 'member' });
    expect(byAdmin.status).toBe(201);
    expect(byAdmin.body).toMatchObject({ user_id: member.user.id, role: 'member' });

    const unknown = await as(api.app, admin)
      .post(`/tenant/${tenant.id}/members`)
      .send({ email: uniqueEmail('nobody'), role: 'member' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');

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
