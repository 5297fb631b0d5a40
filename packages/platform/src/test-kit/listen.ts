import type { AddressInfo } from 'node:net';
import type { Express } from 'express';
import { createAppServer } from '../http/app-server';

/** The app on a free loopback port, for clients supertest cannot be (streams, real sockets). */
export async function listen(app: Express): Promise<{ url: string; close(): Promise<void> }> {
  const server = createAppServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
