import cors from 'cors';
import express from 'express';
import request from 'supertest';
import { servingCors } from './file-serving';

/** What the `cors` package alone answers, with the options servingCors gives it. */
function plainCors(origins: string) {
  const list = origins.split(',').map((o) => o.trim());
  return cors({
    origin: list.includes('*') ? '*' : list,
    methods: ['GET', 'HEAD'],
    allowedHeaders: ['Range', 'If-Range', 'If-None-Match', 'Authorization'],
    exposedHeaders: ['Content-Range', 'Accept-Ranges', 'ETag', 'Content-Length', 'Last-Modified'],
    maxAge: 600,
  });
}

function appWith(handler: express.RequestHandler) {
  const app = express();
  app.options('/f', handler);
  app.get('/f', handler, (_req, res) => {
    res.send('bytes');
  });
  return app;
}

const CORS_HEADERS = /^(access-control-|vary$)/;
const corsHeadersOf = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => CORS_HEADERS.test(name)));

describe('servingCors', () => {
  const configs = ['https://viewer.example,https://other.example', '*'];
  const requests: [string, Record<string, string>][] = [
    ['get', {}],
    ['get', { Origin: 'https://viewer.example' }],
    ['get', { Origin: 'https://evil.example' }],
    ['head', {}],
    ['options', { Origin: 'https://viewer.example', 'Access-Control-Request-Method': 'GET' }],
    ['options', { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'GET' }],
  ];
  for (const origins of configs) {
    it.each(requests)(
      `answers %s %j as the cors package does (CORS_ORIGINS=${origins})`,
      async (method, headers) => {
        const send = (app: express.Express) => {
          const req = request(app)[method as 'get' | 'head' | 'options']('/f');
          for (const [name, value] of Object.entries(headers)) req.set(name, value);
          return req;
        };
        const [ours, theirs] = await Promise.all([
          send(appWith(servingCors(origins))),
          send(appWith(plainCors(origins))),
        ]);
        expect(ours.status).toBe(theirs.status);
        expect(corsHeadersOf(ours.headers)).toEqual(corsHeadersOf(theirs.headers));
      },
    );
  }
});
