import { randomBytes } from 'node:crypto';
import type { Express } from 'express';
import request from 'supertest';
import {
  type CrossHostStack,
  collabAs,
  startCrossHostStack,
  type Team,
  teamWorkspace,
} from '#collab-test/collab-test-kit';

type Schema = {
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
};
interface Operation {
  parameters?: { name: string; in: string }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
};

const NUL = 'bolt\u0000head';
const LONE_SURROGATE = '"\\ud800"';
const DEEP = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
/** 30,000 keys in one object (built once: it is the same body for every route). */
const MANY_KEYS = JSON.stringify(Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`k${i}`, i])));

/** The hostile bodies a client can send to a JSON route; `fields` are the route's declared ones. */
function jsonBodies(fields: string[], workspace: string): string[] {
  const plain = Object.fromEntries(fields.map((f) => [f, f === 'workspace' ? workspace : NUL]));
  return [
    JSON.stringify(plain),
    JSON.stringify({ ...plain, workspace }).replace(/"bolt\\u0000head"/g, LONE_SURROGATE),
    `{"workspace":${JSON.stringify(workspace)},"name":"x","attributes":{"__proto__":{"polluted":true}},"__proto__":{"a":1}}`,
    `{"workspace":${JSON.stringify(workspace)},"constructor":{"prototype":{"x":1}}}`,
    `{"workspace":${JSON.stringify(workspace)},"data":${DEEP}}`,
    DEEP,
    MANY_KEYS,
    '[1,2,3]',
    '"just a string"',
    '{"name": ',
  ];
}

/** Broken multipart: truncated, without a boundary, and 2,000 fields. */
function multipartBodies(): { type: string; body: string }[] {
  const boundary = 'hostileboundary';
  const many = Array.from(
    { length: 2_000 },
    (_, i) => `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\nv\r\n`,
  ).join('');
  return [
    {
      type: `multipart/form-data; boundary=${boundary}`,
      body: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\npn,na`,
    },
    { type: 'multipart/form-data', body: 'pn,name\nA,B\n' },
    { type: `multipart/form-data; boundary=${boundary}`, body: `${many}--${boundary}--\r\n` },
    {
      type: `multipart/form-data; boundary=${boundary}`,
      body: `--${boundary}\r\nContent-Disposition: form-data; name="workspace"\r\n\r\n${NUL}\r\n--${boundary}--\r\n`,
    },
  ];
}

function resolve(doc: Document, schema: Schema | undefined): Schema | undefined {
  if (!schema?.$ref) return schema;
  return doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')];
}

/** Every documented operation, each path parameter filled with a hostile value in turn. */
function operations(doc: Document) {
  const list: { method: string; path: string; template: string; op: Operation }[] = [];
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const streams = Object.values(op.responses ?? {}).some((r) => r.content?.['text/event-stream']);
      if (streams && method === 'get') continue; // an open stream never ends; its errors are tested in events-stream.test.ts
      const values = template.includes('{')
        ? ['%00', 'x'.repeat(3000), '..%2F..%2Fetc', '01a20a3b-0000-7000-8000-000000000000']
        : [''];
      for (const value of values) {
        list.push({ method, template, op, path: template.replace(/\{[^}]+\}/g, value) });
      }
    }
  }
  // Deletions last, so they cannot take away what the other operations act on.
  return list.sort((a, b) => Number(a.method === 'delete') - Number(b.method === 'delete'));
}

/**
 * A hostile-input corpus sent to every route of both OpenAPI documents (generated from them, so a
 * new route is covered by the day it is documented): NUL bytes, lone surrogates, JSON nested 10,000
 * deep, 30,000 keys, prototype keys, malformed multipart, hostile path and query values. Every answer
 * must be a 4xx (or a success), never a 5xx, and the service must still answer afterwards.
 */
describe('hostile input on every documented route', () => {
  let stack: CrossHostStack;
  let team: Team;

  beforeAll(async () => {
    stack = await startCrossHostStack({ api: { RATE_LIMIT_STANDARD_PER_WINDOW: '1000000' } });
    team = await teamWorkspace(stack, 'hostile');
    await collabAs(stack.collab.app, team.owner)
      .post('/v1/parts')
      .send({ workspace: team.workspace, partNumber: 'H-1', name: 'Hostile target' })
      .expect(201);
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  async function sweep(app: Express, token: string): Promise<{ sent: number; fiveHundreds: string[] }> {
    const doc = (await request(app).get('/openapi.json').expect(200)).body as Document;
    const fiveHundreds: string[] = [];
    let sent = 0;
    const send = async (method: string, path: string, query: string, type?: string, body?: string) => {
      let req = request(app)[method as 'get'](`${path}${query}`).set('Authorization', `Bearer ${token}`);
      if (type) req = req.set('Content-Type', type).send(body);
      const res = await req;
      sent++;
      if (res.status >= 500)
        fiveHundreds.push(
          `${method.toUpperCase()} ${path}${query.slice(0, 60)} ${type ?? ''} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`,
        );
    };
    for (const { method, path, op } of operations(doc)) {
      const queryNames = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
      const ws = `workspace=${encodeURIComponent(team.workspace)}`;
      await send(method, path, `?${ws}`);
      for (const name of queryNames.filter((n) => n !== 'workspace')) {
        await send(method, path, `?${ws}&${name}=${encodeURIComponent(NUL)}`);
        await send(method, path, `?${ws}&${name}[a][b][c]=1&${name}=%ED%A0%80`);
      }
      if (method === 'get' || method === 'delete') continue;
      const content = op.requestBody?.content ?? {};
      if (content['multipart/form-data']) {
        for (const { type, body } of multipartBodies()) await send(method, path, `?${ws}`, type, body);
      }
      const schema = resolve(doc, content['application/json']?.schema);
      const fields = Object.keys(schema?.properties ?? {});
      for (const body of jsonBodies(fields.length ? fields : ['name', 'workspace'], team.workspace)) {
        await send(method, path, `?${ws}`, 'application/json', body);
      }
    }
    return { sent, fiveHundreds };
  }

  it('the collaboration host answers no 5xx and keeps serving', async () => {
    const { sent, fiveHundreds } = await sweep(stack.collab.app, team.owner.token);
    expect(fiveHundreds).toEqual([]);
    expect(sent).toBeGreaterThan(200);
    await request(stack.collab.app).get('/healthz').expect(200);
    await collabAs(stack.collab.app, team.owner).get(`/v1/parts?workspace=${team.workspace}`).expect(200);
  }, 240_000);

  it('the API host answers no 5xx and keeps serving', async () => {
    const { sent, fiveHundreds } = await sweep(stack.api.app, team.engineer.token);
    expect(fiveHundreds).toEqual([]);
    expect(sent).toBeGreaterThan(100);
    await request(stack.api.app).get('/healthz').expect(200);
  }, 240_000);

  it('refuses NUL, lone surrogates, deep nesting and prototype keys with 400 naming the field', async () => {
    const app = stack.collab.app;
    const owner = collabAs(app, team.owner);
    const post = (body: string) => owner.post('/v1/parts').set('Content-Type', 'application/json').send(body);
    const nul = await post(JSON.stringify({ workspace: team.workspace, name: NUL }));
    expect([nul.status, nul.body.errors]).toEqual([
      400,
      [{ field: 'body.name', message: 'must not contain NUL characters' }],
    ]);
    const lone = await post(`{"workspace":"${team.workspace}","name":"\\udc00x"}`);
    expect([lone.status, lone.body.errors[0].field]).toEqual([400, 'body.name']);
    const deep = await post(`{"workspace":"${team.workspace}","attributes":${DEEP}}`);
    expect([deep.status, deep.body.errors[0].message]).toEqual([400, 'nesting deeper than 32 levels']);
    const proto = await post(
      `{"workspace":"${team.workspace}","name":"p","attributes":{"__proto__":{"x":1}}}`,
    );
    expect([proto.status, proto.body.errors]).toEqual([
      400,
      [{ field: 'body.attributes.__proto__', message: 'the key "__proto__" is not allowed' }],
    ]);
    const search = await owner.get(`/v1/parts?workspace=${team.workspace}&q=${encodeURIComponent(NUL)}`);
    expect([search.status, search.body.errors[0].field]).toEqual([400, 'query.q']);
    // An id in the path must be a UUID: a NUL names no part (404), it never reaches the database.
    const param = await owner.get(`/v1/parts/%00?workspace=${team.workspace}`);
    expect([param.status, param.body.code]).toEqual([404, 'not_found']);
  });
});

/**
 * Issue 34, finding 10: a form without a boundary (busboy refuses to start) was a 500 on the
 * collaboration host in production mode. Every multipart route of its document, production mode.
 */
describe('multipart without a boundary in production mode', () => {
  let stack: CrossHostStack;
  let team: Team;

  beforeAll(async () => {
    stack = await startCrossHostStack({
      collab: { NODE_ENV: 'production', SESSION_SECRET: randomBytes(32).toString('hex') },
    });
    team = await teamWorkspace(stack, 'hostileprod');
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('is 400 validation_failed on every multipart route of the collaboration host', async () => {
    const app = stack.collab.app;
    expect(stack.collab.deps.config.NODE_ENV).toBe('production');
    const doc = (await request(app).get('/openapi.json').expect(200)).body as Document;
    const [row] = await stack.collab.deps.dataSource.query(
      'SELECT username FROM collab_users WHERE id = $1',
      [team.owner.user.id],
    );
    const answers: string[] = [];
    for (const { method, path, template, op } of operations(doc)) {
      if (!op.requestBody?.content?.['multipart/form-data']) continue;
      // A route with an id in its path: once, with a well-formed id.
      if (template.includes('{') && !path.includes('01a20a3b-')) continue;
      for (const type of ['multipart/form-data', 'multipart/form-data; charset=utf-8']) {
        const res = await request(app)
          [method as 'post'](`${path}?workspace=${team.workspace}&username=${row.username}`)
          .set('Authorization', `Bearer ${team.owner.token}`)
          .set('Content-Type', type)
          .send('file=abc');
        answers.push(`${method.toUpperCase()} ${path} ${type} -> ${res.status} ${res.body.code}`);
      }
    }
    expect(answers.length).toBeGreaterThanOrEqual(8);
    expect(answers.filter((a) => !a.endsWith('-> 400 validation_failed'))).toEqual([]);
  });
});
