import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { createAppServer } from '@hwp/platform';
import express, { type Request } from 'express';
import {
  type EventSink,
  encodeMessage,
  HEARTBEAT,
  MAX_BUFFERED_BYTES,
  openEventStream,
} from './event-stream';

// The sink as the hub uses it: messages go straight to the socket as ready-made HTTP chunks, other
// writes through the response. A real client must read them all, in the order they were written.
let server: Server;
let port: number;
/** What the next stream does; it settles when the stream has been written (the sink is closed then). */
let onStream: (sink: EventSink, req: Request) => Promise<unknown>;
const clientErrors: Error[] = [];

beforeAll(async () => {
  const app = express();
  app.get('/events', (req, res) => {
    const sink = openEventStream(req, res, 3000);
    void onStream(sink, req).finally(() => sink.close());
  });
  server = createAppServer(app);
  // A connection error the server sees (a write after the client ended, say); with a listener, the
  // socket is the listener's to close.
  server.on('clientError', (error, socket) => {
    clientErrors.push(error);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const message = (n: number) => `id: ${n}\nevent: update\ndata: {"n":${n},"pad":"${'x'.repeat(n * 37)}"}\n\n`;

/**
 * Writes a mix of messages, comments and plain writes, some in one tick, some after a pause and a
 * drain; answers the text a client must read and whether every write was accepted.
 */
async function mixed(sink: EventSink): Promise<{ text: string; accepted: boolean[] }> {
  const parts: string[] = ['retry: 3000\n\n'];
  const accepted: boolean[] = [];
  const send = (n: number) => {
    accepted.push(sink.writeMessage(encodeMessage(message(n))));
    parts.push(message(n));
  };
  send(1);
  accepted.push(sink.writeMessage(HEARTBEAT));
  parts.push(': heartbeat\n\n');
  send(2);
  send(3);
  accepted.push(sink.write('id: 4\nevent: replayed\ndata: {}\n\n'));
  parts.push('id: 4\nevent: replayed\ndata: {}\n\n');
  accepted.push(sink.writeMessage(encodeMessage('')));
  send(5);
  await sleep(20);
  send(6);
  accepted.push(sink.writeMessage(HEARTBEAT));
  parts.push(': heartbeat\n\n');
  await sink.drained();
  send(7);
  return { text: parts.join(''), accepted };
}

/**
 * A raw client: sends `request` and collects what comes back until the server closes, or until
 * `chunkedEnds` chunked responses have ended (the stream keeps the connection alive).
 */
function rawClient(request: string, chunkedEnds = 1): { socket: Socket; received: Promise<string> } {
  const socket = connect(port, '127.0.0.1', () => socket.write(request));
  const received = new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const text = () => Buffer.concat(chunks).toString();
    const end = '\r\n0\r\n\r\n';
    let tail = '';
    let ends = 0;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Counted on the new bytes and the few before them (an end may straddle two reads).
      const seen = tail + chunk.toString('latin1');
      ends += seen.split(end).length - 1;
      tail = seen.slice(-(end.length - 1));
      if (ends >= chunkedEnds) {
        socket.destroy();
        resolve(text());
      }
    });
    socket.on('end', () => resolve(text()));
    socket.on('error', reject);
  });
  return { socket, received };
}

describe('openEventStream', () => {
  it('delivers messages, comments and writes in order over a chunked HTTP/1.1 response', async () => {
    let written: Promise<{ text: string; accepted: boolean[] }> | undefined;
    onStream = (sink) => {
      written = mixed(sink);
      return written;
    };
    const res = await fetch(`http://127.0.0.1:${port}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const body = await res.text();
    const { text, accepted } = await written!;
    expect(body).toBe(text);
    expect(accepted.every(Boolean)).toBe(true);
  });

  it('writes the same bytes to an HTTP/1.0 client, whose response is not chunked', async () => {
    let written: Promise<{ text: string; accepted: boolean[] }> | undefined;
    onStream = (sink) => {
      written = mixed(sink);
      return written;
    };
    const raw = await rawClient('GET /events HTTP/1.0\r\n\r\n').received;
    const end = raw.indexOf('\r\n\r\n');
    expect(raw.slice(0, end)).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(raw.slice(0, end).toLowerCase()).not.toContain('transfer-encoding');
    expect(raw.slice(end + 4)).toBe((await written!).text);
  });

  it('reports a client that does not read, and drains once it reads', async () => {
    const big = encodeMessage(message(1).replace('"pad":"', `"pad":"${'y'.repeat(64 * 1024)}`));
    let refused = -1;
    let drainedEarly = true;
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    onStream = async (sink) => {
      for (let i = 0; i < 400 && refused < 0; i++) if (!sink.writeMessage(big)) refused = i;
      // Past what the kernel's socket buffers can hold, so only the client's reading drains it.
      for (let i = 0; i < 400; i++) sink.writeMessage(big);
      const drained = sink.drained().then(() => 'drained');
      drainedEarly = (await Promise.race([drained, sleep(200).then(() => 'waiting')])) === 'drained';
      done();
      await drained;
    };
    const { socket, received } = rawClient('GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    socket.pause();
    await finished;
    // More than the limit waited unread before a write was refused, and the drain waits for the client.
    expect(refused).toBeGreaterThan(MAX_BUFFERED_BYTES / big.chunk.length - 1);
    expect(drainedEarly).toBe(false);
    socket.resume();
    const raw = await received.catch(() => '');
    expect(raw.length).toBeGreaterThan(MAX_BUFFERED_BYTES);
  });

  it('makes a pipelined stream, queued behind an open one, wait to drain', async () => {
    const big = encodeMessage(message(2).replace('"pad":"', `"pad":"${'z'.repeat(64 * 1024)}`));
    const sinks: EventSink[] = [];
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let secondDrainedEarly = true;
    onStream = async (sink) => {
      sinks.push(sink);
      if (sinks.length === 1) return held;
      // The second response has no socket yet: what it writes queues in itself.
      for (let i = 0; i < 40; i++) sink.writeMessage(big);
      const drained = sink.drained().then(() => 'drained');
      secondDrainedEarly = (await Promise.race([drained, sleep(200).then(() => 'waiting')])) === 'drained';
      release();
      await drained;
    };
    const request = 'GET /events HTTP/1.1\r\nHost: x\r\n\r\n';
    const last = 'GET /events HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
    const { received } = rawClient(`${request}${last}`, 2);
    const raw = await received.catch(() => '');
    expect(secondDrainedEarly).toBe(false);
    expect(raw.split('HTTP/1.1 200 OK').length - 1).toBe(2);
  });

  it('takes no message after the client has hung up', async () => {
    let results: boolean[] = [];
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    onStream = async (sink, req) => {
      // Right after the client's end arrives: the server has ended its side, the response is still open.
      await new Promise((resolve) => req.socket.once('end', resolve));
      results = [sink.writeMessage(encodeMessage(message(1))), sink.writeMessage(encodeMessage(message(2)))];
      done();
    };
    const { socket } = rawClient('GET /events HTTP/1.1\r\nHost: x\r\n\r\n');
    socket.on('error', () => undefined);
    await sleep(30);
    socket.end();
    await finished;
    await sleep(20);
    expect(results).toEqual([true, true]);
    expect(clientErrors).toEqual([]);
  });
});
