import express from 'express';
import request from 'supertest';
import { unvalidated } from './response-validation';

// The hook is installed for every test file (jest.config.js setupFilesAfterEnv); this app serves
// its own small document so each rule of the check can be seen in isolation.
const json = (schema: Record<string, unknown>) => ({ content: { 'application/json': { schema } } });
const document = {
  openapi: '3.1.0',
  info: { title: 'hook test', version: '1' },
  paths: {
    '/widgets/{id}': {
      get: {
        responses: {
          200: { description: 'A widget', ...json({ $ref: '#/components/schemas/Widget' }) },
          404: { description: 'None', ...json({ $ref: '#/components/schemas/ErrorBodyDto' }) },
        },
      },
    },
    '/widgets/latest': { get: { responses: { 201: { description: 'Made', ...json({ type: 'object' }) } } } },
    '/widgets/{id}/events': {
      get: { responses: { 200: { description: 'Stream', content: { 'text/event-stream': {} } } } },
    },
    '/files/{key}': { put: { responses: { 200: { description: 'Stored (no body)' } } } },
  },
  components: {
    schemas: {
      Widget: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          madeAt: { type: 'string', format: 'date-time' },
          attributes: { type: 'object', additionalProperties: true },
        },
        required: ['name', 'madeAt'],
      },
      ErrorBodyDto: {
        type: 'object',
        properties: { detail: { type: 'string' }, code: { type: 'string' } },
        required: ['detail', 'code'],
      },
    },
  },
};

const app = express();
app.get('/openapi.json', (_req, res) => {
  res.json(document);
});
app.get('/widgets/latest', (_req, res) => {
  res.status(200).json({});
});
app.get('/widgets/:id/events', (_req, res) => {
  res.type('text/event-stream').send('data: {}\n\n');
});
app.get('/widgets/:id', (req, res) => {
  const { id } = req.params;
  if (id === 'missing') return res.status(404).json({ detail: 'No widget', code: 'not_found' });
  if (id === 'locked') return res.status(423).json({ message: 'locked' });
  if (id === 'teapot') return res.status(418).json({ detail: 'I am a teapot', code: 'teapot' });
  const widget = { name: 'w', madeAt: new Date().toISOString(), attributes: { any: { thing: 1 } } };
  if (id === 'extra') return res.json({ ...widget, colour: 'red' });
  if (id === 'date') return res.json({ ...widget, madeAt: '2024-01-01' });
  res.json(widget);
});
app.put('/files/*key', (req, res) => {
  if (req.query.body) return res.json({ stored: true });
  res.status(200).end();
});

describe('the response validation hook', () => {
  it('passes an answer that matches its documented schema, free objects included', async () => {
    await request(app).get('/widgets/1').expect(200);
    await request(app).get('/widgets/missing').expect(404);
  });

  it('fails a field the schema does not name, naming method, path, status and the problem', async () => {
    await expect(request(app).get('/widgets/extra').then()).rejects.toThrow(
      /GET \/widgets\/extra \(operation GET \/widgets\/\{id\}\) answered 200, which does not match the documented schema #\/components\/schemas\/Widget:\n {2}\(body\) must NOT have additional properties \(additionalProperty: "colour"\)/,
    );
    await expect(request(app).get('/widgets/date').then()).rejects.toThrow(
      /\/madeAt must match format "date-time"/,
    );
  });

  it('checks an error status the operation does not list against the error body', async () => {
    await request(app).get('/widgets/teapot').expect(418);
    await expect(request(app).get('/widgets/locked').then()).rejects.toThrow(
      /answered 423 \(not listed, so checked as the error body\).*ErrorBodyDto:\n.*must have required property 'detail'/s,
    );
  });

  it('fails a success status the document does not list', async () => {
    await expect(request(app).get('/widgets/latest').then()).rejects.toThrow(
      /GET \/widgets\/latest \(operation GET \/widgets\/latest\) answered 200, a status the document does not list \(201\)/,
    );
  });

  it('matches a trailing parameter across slashes, and fails a body where none is documented', async () => {
    await request(app).put('/files/a/b/c.txt').expect(200);
    await expect(request(app).put('/files/a/b/c.txt?body=1').then()).rejects.toThrow(
      /PUT \/files\/a\/b\/c.txt \(operation PUT \/files\/\{key\}\) answered 200 with a JSON body, documented without one/,
    );
  });

  it('skips what the document says nothing about', async () => {
    await request(app).get('/widgets/1/events').expect(200);
    await request(app).get('/nowhere').expect(404);
    await request(app).get('/openapi.json').expect(200);
  });

  it('skips a request marked unvalidated, and the end() callback style is checked too', async () => {
    await unvalidated(request(app).get('/widgets/extra'), 'shows the opt-out').expect(200);
    const error = await new Promise<Error | null>((done) => {
      request(app)
        .get('/widgets/extra')
        .end((err) => done(err));
    });
    expect(String(error)).toContain('additionalProperty: "colour"');
  });
});
