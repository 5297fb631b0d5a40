import { mkdirSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { type Extension, PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  /** postgres:// URL the `pg` driver (and TypeORM) connects to. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The embedded default: PGlite keeps the database in `dataDir` and pglite-socket serves it over
 * the Postgres wire protocol on loopback, so the same `pg` driver and migrations run as on a
 * real server. PGlite runs one query at a time and a transaction holds it: code must keep every
 * query of a unit of work on that transaction's manager (another connection would wait forever).
 */
export async function startEmbeddedPostgres(dataDir: string, maxConnections = 8): Promise<EmbeddedPostgres> {
  mkdirSync(dataDir, { recursive: true });
  // The contrib typings are ESM-only although the package ships a CommonJS build of each extension.
  const { pg_trgm } = require('@electric-sql/pglite/contrib/pg_trgm') as { pg_trgm: Extension };
  const db = await PGlite.create({ dataDir, extensions: { pg_trgm } });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  await server.start();
  // The class keeps its net.Server private; port 0 means we must read the bound port from it.
  const netServer = (server as unknown as { server: Server | null }).server;
  const address = netServer?.address() as AddressInfo | null;
  if (!address?.port) throw new Error('embedded Postgres did not report its port');
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${address.port}/postgres`,
    async stop() {
      await server.stop();
      await db.close();
    },
  };
}
