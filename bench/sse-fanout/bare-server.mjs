// The baseline of bench/sse-fanout: a bare Node http server that holds SSE streams and, on
// POST /emit, writes one message to every stream. No framework, database or broker.
// Prints its port on stdout once listening.
import { createServer } from 'node:http';

const streams = new Set();
/** Streams that get no messages (`/events?quiet`), as the bench's streams of an idle workspace. */
const quiet = new Set();
let nextId = 1;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url.startsWith('/events')) {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'X-Accel-Buffering': 'no',
    });
    req.socket.setNoDelay(true);
    res.write('retry: 3000\n\n');
    const set = req.url.includes('quiet') ? quiet : streams;
    set.add(res);
    res.on('close', () => set.delete(res));
    return;
  }
  if (req.method === 'POST' && req.url === '/emit') {
    const id = nextId++;
    // The same shape and size as a collaboration `update` event.
    const event = {
      id,
      type: 'update',
      workspace: 'bench',
      actor: 'owner',
      at: new Date().toISOString(),
      data: { kind: 'member', username: 'member', role: id % 2 ? 'viewer' : 'engineer' },
    };
    const frame = `id: ${id}\nevent: update\ndata: ${JSON.stringify(event)}\n\n`;
    for (const stream of streams) stream.write(frame);
    res.writeHead(204).end();
    return;
  }
  if (req.url === '/healthz') {
    res.writeHead(200).end('ok');
    return;
  }
  res.writeHead(404).end();
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.on('SIGTERM', () => process.exit(0));
