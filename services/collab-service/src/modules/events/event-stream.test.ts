import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import express from 'express';
import { type EventSink, encodeMessage, openEventStream } from './event-stream';

// The sink as the hub uses it: messages go straight to the socket as ready-made HTTP chunks, other
// writes through the response. A real client must read them all, in the order they were written.
let server: Server;
let port: number;
let onStream: (sink: EventSink) => Promise<void>;

beforeAll(async () => {
  const app = express();
  app.get('/events', (req, res) => {
    const sink = openEventStream(req, res, 3000);
    void onStream(sink).finally(() => sink.close());
  });
  server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Writes a mix of messages, comments and plain writes, some in one tick, some after a pause. */
async function mixed(sink: EventSink): Promise<string> {
  const parts: string[] = ['retry: 3000\n\n'];
  const message = (n: number) => {
    const text = `id: ${n}\nevent: update\ndata: {"n":${n},"pad":"${'x'.repeat(n * 37)}"}\n\n`;
    expect(sink.writeMessage(encodeMessage(text))).toBe(true);
    parts.push(text);
  };
  message(1);
  sink.comment('heartbeat');
  parts.push(': heartbeat\n\n');
  message(2);
  message(3);
  expect(sink.write('id: 4\nevent: replayed\ndata: {}\n\n')).toBe(true);
  parts.push('id: 4\nevent: replayed\ndata: {}\n\n');
  message(5);
  await new Promise((resolve) => setTimeout(resolve, 20));
  message(6);
  sink.comment('heartbeat');
  parts.push(': heartbeat\n\n');
  await sink.drained();
  message(7);
  return parts.join('');
}

describe('openEventStream', () => {
  it('delivers messages, comments and writes in order over a chunked HTTP/1.1 response', async () => {
    let expected = '';
    onStream = async (sink) => {
      expected = await mixed(sink);
    };
    const res = await fetch(`http://127.0.0.1:${port}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get('transfer-encoding')).toBe('chunked');
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(await res.text()).toBe(expected);
  });

  it('writes the same bytes to an HTTP/1.0 client, whose response is not chunked', async () => {
    let expected = '';
    onStream = async (sink) => {
      expected = await mixed(sink);
    };
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('GET /events HTTP/1.0\r\n\r\n'));
      const chunks: Buffer[] = [];
      socket.on('data', (chunk) => chunks.push(chunk));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
      socket.on('error', reject);
    });
    const [head, body] = [raw.slice(0, raw.indexOf('\r\n\r\n')), raw.slice(raw.indexOf('\r\n\r\n') + 4)];
    expect(head).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(head.toLowerCase()).not.toContain('transfer-encoding');
    expect(body).toBe(expected);
  });
});
