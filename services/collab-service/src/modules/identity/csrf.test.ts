import request from 'supertest';
import { collabAs, collabMember, type Stack, startStack, type TestUser } from '#test/collab-test-kit';

let stack: Stack;
let user: TestUser;
let cookie: string;
let csrf: string;
let workspace: string;

beforeAll(async () => {
  stack = await startStack({ collab: { CORS_ORIGINS: 'https://app.example.com' } });
  user = await collabMember(stack);
  workspace = `csrf-${Date.now()}`;
  await collabAs(stack.collab.app, user).post('/v1/workspaces').send({ name: workspace }).expect(201);
  const exchange = await collabAs(stack.collab.app, user).post('/api/auth/session').expect(200);
  const raw = exchange.headers['set-cookie'] as unknown as string[];
  const value = (name: string) => (raw.find((c) => c.startsWith(`${name}=`)) as string).split(';')[0];
  cookie = value('hwp.sid');
  csrf = decodeURIComponent(value('hwp.csrf').slice('hwp.csrf='.length));
}, 60_000);
afterAll(() => stack?.stop());

/** The request a page on another site makes with the user's cookie: a multipart import. */
function crossSiteImport(extra: Record<string, string> = {}) {
  let req = request(stack.collab.app).post('/v1/parts/import').set('Cookie', cookie);
  for (const [name, value] of Object.entries(extra)) req = req.set(name, value);
  return req
    .field('workspace', workspace)
    .attach('file', Buffer.from('pn,name\nEVIL-1,Planted\n'), { filename: 'p.csv', contentType: 'text/csv' });
}

async function partCount(): Promise<number> {
  const res = await collabAs(stack.collab.app, user).get(`/v1/parts?workspace=${workspace}`).expect(200);
  return res.body.total as number;
}

describe('CSRF on cookie-authenticated collaboration routes', () => {
  test('a cross-site multipart import with the session cookie gets 403 and creates nothing', async () => {
    const evil = { Origin: 'http://evil.example', 'Sec-Fetch-Site': 'cross-site' };
    const res = await crossSiteImport(evil);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
    // Even with a stolen CSRF token the foreign origin is refused; and a same-site sibling too.
    expect((await crossSiteImport({ ...evil, 'X-CSRF-Token': csrf })).status).toBe(403);
    const sibling = {
      Origin: 'https://files.example.com',
      'Sec-Fetch-Site': 'same-site',
      'X-CSRF-Token': csrf,
    };
    expect((await crossSiteImport(sibling)).status).toBe(403);
    // No Origin at all (an old browser, a form post stripped of it): the token is still required.
    expect((await crossSiteImport()).status).toBe(403);
    expect(await partCount()).toBe(0);
  });

  test('same-origin browser requests with the CSRF token work, and so do allowed origins', async () => {
    const host = `http://${'127.0.0.1'}`;
    const sameOrigin = await request(stack.collab.app)
      .post('/v1/parts')
      .set('Cookie', cookie)
      .set('Host', '127.0.0.1')
      .set('Origin', host)
      .set('Sec-Fetch-Site', 'same-origin')
      .set('X-CSRF-Token', csrf)
      .send({ workspace, partNumber: 'OK-1', name: 'Same origin' });
    expect(sameOrigin.status).toBe(201);
    const fromApp = await crossSiteImport({
      Origin: 'https://app.example.com',
      'Sec-Fetch-Site': 'cross-site',
      'X-CSRF-Token': csrf,
    });
    expect(fromApp.status).toBe(200);
    expect(await partCount()).toBe(2);
    // Reads need no token.
    await request(stack.collab.app).get(`/v1/parts?workspace=${workspace}`).set('Cookie', cookie).expect(200);
  });

  test('bearer requests are unaffected by Origin and need no token', async () => {
    const res = await collabAs(stack.collab.app, user)
      .post('/v1/parts')
      .set('Origin', 'http://evil.example')
      .set('Sec-Fetch-Site', 'cross-site')
      .send({ workspace, partNumber: 'B-1', name: 'Bearer' });
    expect(res.status).toBe(201);
  });
});
