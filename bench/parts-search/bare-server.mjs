// The floor for bench/parts-search: the search's SQL behind a bare node:http server with a `pg` pool,
// which sends the page of rows as JSON and nothing else (no authentication, validation, logging or
// presenter). Environment: DB_URL, WORKSPACE_ID, PORT; `GET /?q=&pageSize=`. Prints `ready` once listening.
import http from 'node:http';
import { pg } from '../lib/collab.mjs';
import { search } from './search-sql.mjs';

const pool = new pg.Pool({ connectionString: process.env.DB_URL, max: 4 });

const server = http.createServer(async (req, res) => {
  const query = new URL(req.url, 'http://bare').searchParams;
  const { total, rows } = await search(
    pool,
    process.env.WORKSPACE_ID,
    query.get('q'),
    Number(query.get('pageSize')),
  );
  const body = JSON.stringify({ items: rows.filter((row) => row.id !== null), total });
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('ready'));
