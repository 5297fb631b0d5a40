import type { Profile } from '@hwp/contracts';
import { type ApiTestService, as, signUp, startApi } from '#test/api-test-kit';
import { expectSchema } from '#test/openapi-schemas';
import { hex, tenantHelpers } from '#test/tenants-test-setup';

let api: ApiTestService;

beforeAll(async () => {
  api = await startApi();
});

afterAll(async () => {
  await api?.stop();
});

const { createTenant, tenantsOf, tenantWithMembers } = tenantHelpers(() => api.app);

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
