import express, { type Express } from 'express';
import request from 'supertest';
import { ApiRouter, requestPrefix, routePrefix } from './api-router';
import { OpenApiBuilder } from './openapi';

/** Routes in declaration order: some share a prefix, some have none (a parameter in the first two segments). */
const ROUTES: ['get' | 'post' | 'head' | 'delete', string][] = [
  ['get', '/healthz'],
  ['get', '/v1/parts'],
  ['post', '/v1/parts'],
  ['get', '/v1/parts/:number'],
  ['get', '/v1/:anything/special'],
  ['get', '/v1/serve/:workspace/:username/:filename'],
  ['head', '/v1/serve/:workspace/:username/:filename'],
  ['delete', '/v1/parts/:number'],
  ['get', '/:top'],
  ['get', '/v1/blobs/*key'],
  ['get', '/v1/files{/:name}'],
];

function answer(name: string): express.RequestHandler {
  return (req, res) => {
    res.set('X-Route', name).json({ route: name, params: req.params, method: req.method });
  };
}

/** The same routes through ApiRouter (grouped dispatch) or registered on the app one by one (express alone). */
function appWith(grouped: boolean): Express {
  const app = express();
  if (grouped) {
    const api = new ApiRouter(new OpenApiBuilder({ title: 't', version: '1', description: 'd' }));
    for (const [method, path] of ROUTES) {
      api.route({
        method,
        path,
        summary: path,
        responses: { 200: { description: 'ok' } },
        handler: ({ req, res }) => answer(`${method} ${path}`)(req, res, () => {}),
      });
    }
    api.attach(app);
  } else {
    for (const [method, path] of ROUTES) app[method](path, answer(`${method} ${path}`));
  }
  app.use((req, res) => {
    res.status(404).json({ route: null, method: req.method });
  });
  return app;
}

describe('ApiRouter dispatch', () => {
  const grouped = appWith(true);
  const plain = appWith(false);
  const requests: ['get' | 'post' | 'head' | 'delete' | 'options', string][] = [
    ['get', '/healthz'],
    ['get', '/healthz/'],
    ['get', '/HEALTHZ'],
    ['get', '/healthz/x'],
    ['get', '/v1/parts'],
    ['get', '/v1/parts/'],
    ['get', '/V1/Parts'],
    ['post', '/v1/parts'],
    ['get', '/v1/parts/abc'],
    ['delete', '/v1/parts/abc'],
    ['get', '/v1/parts/special'],
    ['get', '/v1/serve/special'],
    ['get', '/v1/other/special'],
    ['get', '/v1/serve/ws/ana/model%20v2.step'],
    ['head', '/v1/serve/ws/ana/model.step'],
    ['get', '/v1/%73erve/ws/ana/model.step'],
    ['get', '//v1/parts'],
    ['get', '/v1'],
    ['get', '/v1/'],
    ['get', '/'],
    ['get', '/v1/blobs/a/b/c.bin'],
    ['get', '/v1/files'],
    ['get', '/v1/files/x'],
    ['get', '/nothing'],
    ['post', '/nothing/here'],
  ];
  it.each(requests)('%s %s answers as express alone would', async (method, path) => {
    const [a, b] = await Promise.all([request(grouped)[method](path), request(plain)[method](path)]);
    expect({ status: a.status, route: a.headers['x-route'], body: a.body }).toEqual({
      status: b.status,
      route: b.headers['x-route'],
      body: b.body,
    });
  });

  it('answers OPTIONS of a route path with 204 and Allow, another method with 405 and Allow', async () => {
    const options = await request(grouped).options('/v1/parts');
    expect([options.status, options.headers.allow]).toEqual([204, 'GET, HEAD, POST, OPTIONS']);
    const wrong = await request(grouped).put('/healthz');
    expect([wrong.status, wrong.headers.allow]).toEqual([405, 'GET, HEAD, OPTIONS']);
    expect((await request(grouped).options('/nothing/here')).status).toBe(404);
  });

  it('keys routes by their literal first two segments', () => {
    expect(routePrefix('/v1/serve/:w/:u/:f')).toBe('/v1/serve');
    expect(routePrefix('/healthz')).toBe('/healthz');
    expect(routePrefix('/V1/Parts')).toBe('/v1/parts');
    expect(routePrefix('/v1/:x/y')).toBeNull();
    expect(routePrefix('/:top')).toBeNull();
    expect(routePrefix('/v1/files{/:name}')).toBeNull();
    expect(requestPrefix('/v1/serve/w/u/f')).toBe('/v1/serve');
    expect(requestPrefix('/healthz/')).toBe('/healthz');
    expect(requestPrefix('/v1/parts/')).toBe('/v1/parts');
  });
});

describe('ApiRouter cors', () => {
  // What the `cors` package does, reduced: headers on every answer, 204 for a preflight.
  const cors: express.RequestHandler = (req, res, next) => {
    res.set('Access-Control-Allow-Origin', '*');
    if (req.method === 'OPTIONS') res.status(204).end();
    else next();
  };
  const app = express();
  const api = new ApiRouter(new OpenApiBuilder({ title: 't', version: '1', description: 'd' }));
  for (const method of ['get', 'head'] as const) {
    api.route({
      method,
      path: '/v1/serve/:file',
      summary: 'serve',
      responses: { 200: { description: 'ok' } },
      cors,
      before: [(req, res, next) => (req.headers.authorization ? next() : res.status(401).json({}))],
      handler: () => ({ served: true }),
    });
  }
  api.route({
    method: 'get',
    path: '/v1/other',
    summary: 'other',
    responses: { 200: { description: 'ok' } },
    handler: () => ({}),
  });
  api.attach(app);

  it('answers the preflight of a path whose routes declare cors, and no other', async () => {
    const preflight = await request(app)
      .options('/v1/serve/a.step')
      .set('Origin', 'https://viewer.example')
      .set('Access-Control-Request-Method', 'GET');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    const other = await request(app)
      .options('/v1/other')
      .set('Origin', 'https://viewer.example')
      .set('Access-Control-Request-Method', 'GET');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('runs cors before the route’s own middleware: a refusal carries its headers too', async () => {
    const refused = await request(app).get('/v1/serve/a.step');
    expect(refused.status).toBe(401);
    expect(refused.headers['access-control-allow-origin']).toBe('*');
    const served = await request(app).get('/v1/serve/a.step').set('Authorization', 'x');
    expect(served.body).toEqual({ served: true });
    expect(served.headers['access-control-allow-origin']).toBe('*');
  });
});
