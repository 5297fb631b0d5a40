import { apiService, loadApiConfig } from '@hwp/api-service';
import { collabService, loadCollabConfig } from '@hwp/collab-service';
import type { BaseConfig, ServiceDefinition } from '@hwp/platform';
import { startTestService, type TestService } from '@hwp/platform/test-kit';
import request from 'supertest';
import { validateOpenApi } from './openapi-validator';

const hosts: [string, ServiceDefinition<BaseConfig>, (env: NodeJS.ProcessEnv) => BaseConfig, string][] = [
  ['API host', apiService as ServiceDefinition<BaseConfig>, loadApiConfig, '/system/probes'],
  [
    'collaboration host',
    collabService as ServiceDefinition<BaseConfig>,
    loadCollabConfig,
    '/v1/system/probes',
  ],
];

function expectErrorBody(body: Record<string, unknown>, code: string, path: string) {
  expect(body).toEqual(
    expect.objectContaining({ code, path, detail: expect.any(String), timestamp: expect.any(String) }),
  );
  expect(new Date(String(body.timestamp)).toISOString()).toBe(body.timestamp);
}

describe.each(hosts)('%s HTTP conventions', (_label, definition, loadConfig, probesPath) => {
  let service: TestService<BaseConfig>;

  beforeAll(async () => {
    service = await startTestService(definition, loadConfig);
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('answers /healthz and /readyz with the database and broker checked', async () => {
    const health = await request(service.app).get('/healthz').expect(200);
    expect(health.body).toEqual({ status: 'ok', service: definition.name });
    const ready = await request(service.app).get('/readyz').expect(200);
    expect(ready.body).toEqual({
      status: 'ready',
      checks: {
        database: 'ok',
        broker: 'ok',
        storage: 'ok',
        bus: 'ok',
        // The API host reports whether file processing keeps up.
        ...(definition.name === 'api-service' ? { processing: 'ok' } : {}),
      },
    });
  });

  it('answers CORS for the listed origins on every route (preflight and answer), for no other', async () => {
    // NODE_ENV=test without CORS_ORIGINS: the common dev servers' origins (none in production).
    const path = definition.name === 'api-service' ? '/auth/v1/token' : '/v1/parts';
    const preflight = (origin: string) =>
      request(service.app)
        .options(path)
        .set('Origin', origin)
        .set('Access-Control-Request-Method', 'POST')
        .set(
          'Access-Control-Request-Headers',
          'apikey, authorization, content-type, x-client-info, x-supabase-api-version',
        );
    const ok = await preflight('http://localhost:5173').expect(204);
    expect(ok.headers).toMatchObject({
      'access-control-allow-origin': 'http://localhost:5173',
      'access-control-allow-credentials': 'true',
      'access-control-allow-headers':
        'apikey, authorization, content-type, x-client-info, x-supabase-api-version',
    });
    expect(ok.headers['access-control-allow-methods']).toContain('POST');
    const refused = await preflight('https://evil.example');
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    // The answer itself (an error too) carries the origin, so the page can read it.
    const answer = await request(service.app).post(path).set('Origin', 'http://localhost:5173').send({});
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    expect(answer.headers['access-control-expose-headers']).toContain('Retry-After');
  });

  it('names the Bearer scheme on a 401, and invalid_token when a token was refused', async () => {
    const path = definition.name === 'api-service' ? '/profile' : '/v1/parts';
    const none = await request(service.app).get(path).expect(401);
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const bad = await request(service.app).get(path).set('Authorization', 'Bearer not-a-token').expect(401);
    expect(bad.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('answers a form-encoded or text body on a JSON route with 415', async () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      const res = await request(service.app)
        .post(probesPath)
        .set('Content-Type', type)
        .send('note=x')
        .expect(415);
      expectErrorBody(res.body, 'unsupported_media_type', probesPath);
    }
  });

  it('answers a known path with a method it does not take with 405 and Allow', async () => {
    const res = await request(service.app).delete('/healthz').expect(405);
    expect(res.headers.allow).toBe('GET, HEAD, OPTIONS');
    expectErrorBody(res.body, 'method_not_allowed', '/healthz');
    const options = await request(service.app).options('/healthz').expect(204);
    expect(options.headers.allow).toBe('GET, HEAD, OPTIONS');
  });

  it('answers an unknown route with 404 in the error body', async () => {
    const res = await request(service.app).get('/no/such/route?x=1').expect(404);
    expectErrorBody(res.body, 'not_found', '/no/such/route');
  });

  it('answers malformed JSON with 400 in the error body', async () => {
    const res = await request(service.app)
      .post(probesPath)
      .set('Content-Type', 'application/json')
      .send('{"note": ')
      .expect(400);
    expectErrorBody(res.body, 'validation_failed', probesPath);
  });

  it('answers a 2 MB JSON body with 413 in the error body', async () => {
    const big = JSON.stringify({ note: 'x'.repeat(2 * 1024 * 1024) });
    const res = await request(service.app)
      .post(probesPath)
      .set('Content-Type', 'application/json')
      .send(big)
      .expect(413);
    expectErrorBody(res.body, 'payload_too_large', probesPath);
  });

  it('rejects unknown and invalid fields with every field named', async () => {
    const res = await request(service.app).post(probesPath).send({ note: 5, extra: true }).expect(400);
    expectErrorBody(res.body, 'validation_failed', probesPath);
    expect([...new Set(res.body.errors.map((e: { field: string }) => e.field))].sort()).toEqual([
      'extra',
      'note',
    ]);
  });

  it('gives one clear message per bad query parameter', async () => {
    const res = await request(service.app).get(probesPath).query({ page: 'abc', pageSize: '0' }).expect(400);
    expectErrorBody(res.body, 'validation_failed', probesPath);
    expect(res.body.errors).toEqual([
      { field: 'page', message: 'page must be a whole number from 1 to 10000000' },
      { field: 'pageSize', message: 'pageSize must be a whole number from 1 to 500' },
    ]);
  });

  it('echoes X-Request-Id and writes it into the log line of the request', async () => {
    const res = await request(service.app)
      .get('/no/such/thing')
      .set('X-Request-Id', 'req-abc.123')
      .expect(404);
    expect(res.headers['x-request-id']).toBe('req-abc.123');
    expect(res.headers['api-version']).toBe('1');
    const line = service.logs.find((l) => l.requestId === 'req-abc.123');
    expect(line).toEqual(expect.objectContaining({ service: definition.name, requestId: 'req-abc.123' }));
  });

  it('makes up a request id when the client sends none or a hostile one', async () => {
    const res = await request(service.app).get('/healthz').set('X-Request-Id', 'bad id\twith spaces');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves a valid OpenAPI 3.1 document that lists its routes, and /docs renders it', async () => {
    const doc = await request(service.app).get('/openapi.json').expect(200);
    expect(doc.body.openapi).toBe('3.1.0');
    const deadLettersPath = probesPath.replace(/probes$/, 'dead-letters');
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining([
        '/healthz',
        '/readyz',
        probesPath,
        deadLettersPath,
        `${deadLettersPath}/{id}/replay`,
      ]),
    );
    const result = await validateOpenApi(doc.body);
    expect(result).toEqual(expect.objectContaining({ valid: true }));
    const page = await request(service.app).get('/docs/').expect(200);
    expect(page.text).toContain('swagger-ui');
    const init = await request(service.app).get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('/openapi.json');
    await request(service.app).get('/docs/swagger-ui-bundle.js').expect(200);
  });

  it('sets the security headers of helmet', async () => {
    const res = await request(service.app).get('/healthz');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });

  it('sends neither HSTS nor upgrade-insecure-requests when served over plain http', async () => {
    const res = await request(service.app).get('/docs/').expect(200);
    expect(res.headers['strict-transport-security']).toBeUndefined();
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    expect(res.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
  });
});

describe('a host served over https (PUBLIC_BASE_URL https://...)', () => {
  let service: TestService<BaseConfig>;
  beforeAll(async () => {
    service = await startTestService(apiService as ServiceDefinition<BaseConfig>, loadApiConfig, {
      PUBLIC_BASE_URL: 'https://plm.example.test',
    });
  });
  afterAll(() => service?.stop());

  it('sends HSTS and upgrade-insecure-requests', async () => {
    const res = await request(service.app).get('/docs/').expect(200);
    expect(res.headers['strict-transport-security']).toMatch(/max-age=\d+/);
    expect(res.headers['content-security-policy']).toContain('upgrade-insecure-requests');
  });
});
