import { once } from 'node:events';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import type { Response } from 'express';
import { sendBody } from './file-serving';

/** A body that never ends on its own (a large file), so only the response can end the send. */
const endless = () =>
  new Readable({
    read() {
      this.push(Buffer.alloc(64 * 1024));
    },
  });

describe('sendBody', () => {
  it('settles and stops reading when the client left before the body was ready', async () => {
    let arrived: () => void = () => undefined;
    const requestArrived = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    let opened: (started: { sent: Promise<void>; body: Readable }) => void = () => undefined;
    const bodyOpened = new Promise<{ sent: Promise<void>; body: Readable }>((resolve) => {
      opened = resolve;
    });
    const server = createServer((_req, res) => {
      arrived();
      // The body takes a while to open (a database read, a file open); the client gives up meanwhile.
      setTimeout(() => {
        const body = endless();
        opened({ sent: sendBody(body, res as unknown as Response), body });
      }, 150);
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const req = request({ host: '127.0.0.1', port, path: '/' });
    req.on('error', () => undefined);
    req.end();
    try {
      // The client leaves once the server has the request, before its body is ready.
      await requestArrived;
      req.destroy();
      const { sent, body } = await bodyOpened;
      await expect(
        Promise.race([sent, new Promise((_, reject) => setTimeout(() => reject(new Error('hung')), 2_000))]),
      ).resolves.toBeUndefined();
      expect(body.destroyed).toBe(true);
    } finally {
      server.close();
    }
  });

  it('stops reading when the client leaves half-way', async () => {
    let sent: Promise<void> | undefined;
    let body: Readable | undefined;
    const server = createServer((_req, res) => {
      body = endless();
      sent = sendBody(body, res as unknown as Response);
    }).listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const req = request({ host: '127.0.0.1', port, path: '/' }, (res) => {
      res.once('data', () => req.destroy());
    });
    req.on('error', () => undefined);
    req.end();
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      await sent;
      expect(body?.destroyed).toBe(true);
    } finally {
      server.close();
    }
  });
});
