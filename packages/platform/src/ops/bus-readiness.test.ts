import { Client } from 'pg';
import request from 'supertest';
import {
  effectCounts,
  makeWidgets,
  recordEffect,
  startWidgetService,
  type WidgetHandler,
} from '#test/widget-service';
import type { BaseConfig } from '../deps';
import { newId } from '../ids';
import { TEST_POSTGRES_URL } from '../test-kit/database';
import { expectEventually } from '../test-kit/eventually';
import type { TestService } from '../test-kit/service';
import { TcpProxy } from '../test-kit/tcp-proxy';

/** Fails each event's first `times` deliveries, then records its effect. */
function failingFirst(times: number): { handler: WidgetHandler; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  return {
    calls,
    handler: async (event, manager) => {
      const n = (calls.get(event.id) ?? 0) + 1;
      calls.set(event.id, n);
      if (n <= times) throw new Error(`injected handler failure ${n}`);
      await recordEffect(event, manager);
    },
  };
}

function logged(service: TestService<BaseConfig>, msg: string): Record<string, unknown>[] {
  return service.logs.filter((line) => line.msg === msg);
}

const modes: [string, Record<string, string | undefined>][] = [
  ['in-process bus', { AMQP_URL: undefined }],
  ['RabbitMQ bus', {}],
];

describe.each(modes)('message path recovery on the %s', (_mode, env) => {
  let service: TestService<BaseConfig>;
  let handler: { current: WidgetHandler };

  beforeAll(async () => {
    ({ service, handler } = await startWidgetService({
      ...env,
      BUS_DEGRADED_AFTER_MS: '1000',
      BUS_RETRY_DELAY_MS: '50',
      BUS_MAX_ATTEMPTS: '5',
    }));
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('recovers from a failing outbox update and a failing handler, reports the bus degraded meanwhile, loses and repeats nothing', async () => {
    const ready = await request(service.app).get('/readyz').expect(200);
    expect(ready.body).toEqual({
      status: 'ready',
      checks: { database: 'ok', broker: 'ok', storage: 'ok', bus: 'ok' },
    });

    const flaky = failingFirst(2);
    handler.current = flaky.handler;
    const { dataSource } = service.deps;
    await dataSource.query(`
      CREATE FUNCTION refuse_outbox_update() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'injected outbox failure'; END $$`);
    await dataSource.query(
      'CREATE TRIGGER refuse_outbox_update BEFORE UPDATE ON outbox FOR EACH ROW EXECUTE FUNCTION refuse_outbox_update()',
    );
    let ids: string[];
    try {
      ids = await makeWidgets(service, 8);
      const degraded = await expectEventually(
        async () => {
          const res = await request(service.app).get('/readyz').expect(200);
          expect(res.body.status).toBe('degraded');
          return res.body;
        },
        { timeoutMs: 15_000 },
      );
      expect(degraded.checks).toEqual({
        database: 'ok',
        broker: 'ok',
        storage: 'ok',
        bus: expect.stringMatching(
          /^degraded: outbox: \d+ events unpublished, oldest \d+ s \(relay failing: .*injected outbox failure/,
        ),
      });
      // The relay went on trying and said which event it was stuck on.
      const failures = logged(service, 'outbox relay batch failed; will retry');
      expect(failures.length).toBeGreaterThan(1);
      expect(ids).toContain(failures[0].eventId);
    } finally {
      await dataSource.query('DROP TRIGGER IF EXISTS refuse_outbox_update ON outbox');
      await dataSource.query('DROP FUNCTION IF EXISTS refuse_outbox_update()');
    }

    await expectEventually(
      async () => {
        const res = await request(service.app).get('/readyz').expect(200);
        expect(res.body).toEqual({ status: 'ready', checks: expect.objectContaining({ bus: 'ok' }) });
      },
      { timeoutMs: 15_000 },
    );
    await expectEventually(async () =>
      expect(await effectCounts(service)).toEqual(Object.fromEntries(ids.map((id) => [id, 1]))),
    );
    // Two failures and one success per event: nothing was delivered again after it succeeded.
    expect(Object.fromEntries(flaky.calls)).toEqual(Object.fromEntries(ids.map((id) => [id, 3])));
    expect(logged(service, 'event handler failed; will retry').map((line) => line.eventId)).toEqual(
      expect.arrayContaining(ids),
    );
    // Rows are marked published after the broker's confirm, which may trail the delivery.
    await expectEventually(async () => {
      const [{ n }] = await dataSource.query(
        'SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL',
      );
      expect(n).toBe(0);
    });
  }, 60_000);
});

describe('message path recovery when the database connection is cut (in-process bus)', () => {
  let proxy: TcpProxy;
  let service: TestService<BaseConfig>;
  let handler: { current: WidgetHandler };
  let databaseUrl: string;

  beforeAll(async () => {
    const server = new URL(TEST_POSTGRES_URL);
    proxy = await TcpProxy.create({ host: server.hostname, port: Number(server.port || 5432) });
    // The service reaches its database through the proxy; the test writes events around it.
    const admin = new Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    const name = `bus_cut_${Date.now().toString(36)}`;
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const direct = new URL(TEST_POSTGRES_URL);
    direct.pathname = `/${name}`;
    databaseUrl = direct.toString();
    ({ service, handler } = await startWidgetService({
      AMQP_URL: undefined,
      DATABASE_URL: proxy.rewriteUrl(databaseUrl),
      BUS_DEGRADED_AFTER_MS: '1000',
      BUS_RETRY_DELAY_MS: '100',
      BUS_MAX_ATTEMPTS: '100',
    }));
  });

  afterAll(async () => {
    await service?.stop();
    await proxy?.close();
    const admin = new Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${new URL(databaseUrl).pathname.slice(1)}" WITH (FORCE)`);
    await admin.end();
  });

  it('relay and consumer both resume after the cut, each event handled once', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first = true;
    // The first delivery holds its transaction open until the cut, so the consumer's database fails too.
    handler.current = async (event, manager) => {
      if (first) {
        first = false;
        await gate;
      }
      await recordEffect(event, manager);
    };
    const before = await makeWidgets(service, 3);
    // All three are published; the first one's handler now waits inside its transaction.
    await expectEventually(async () =>
      expect(
        await service.deps.dataSource.query(
          'SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL',
        ),
      ).toEqual([{ n: 0 }]),
    );

    await proxy.stop();
    release();
    const direct = new Client({ connectionString: databaseUrl });
    await direct.connect();
    const during: string[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const id = newId();
        const envelope = {
          id,
          type: 'widget.made.v1',
          version: 1,
          occurredAt: new Date().toISOString(),
          actor: 'test',
          data: { i },
        };
        await direct.query('INSERT INTO outbox (id, type, envelope) VALUES ($1, $2, $3)', [
          id,
          envelope.type,
          envelope,
        ]);
        during.push(id);
      }
      const down = await request(service.app).get('/readyz').expect(503);
      expect(down.body.status).toBe('unavailable');
      await expectEventually(() =>
        expect(logged(service, 'outbox relay batch failed; will retry').length).toBeGreaterThan(1),
      );
      // The consumer waits for its database instead of spending the message's attempts on the cut.
      await expectEventually(() =>
        expect(logged(service, 'database unavailable; the delivery waits for it').length).toBeGreaterThan(0),
      );
      expect(logged(service, 'event handler failed; will retry')).toEqual([]);
    } finally {
      await direct.end();
      await proxy.start();
    }

    await expectEventually(
      async () =>
        expect(await effectCounts(service)).toEqual(
          Object.fromEntries([...before, ...during].map((id) => [id, 1])),
        ),
      { timeoutMs: 20_000 },
    );
    await expectEventually(async () => {
      const res = await request(service.app).get('/readyz').expect(200);
      expect(res.body).toEqual({
        status: 'ready',
        checks: { database: 'ok', broker: 'ok', storage: 'ok', bus: 'ok' },
      });
    });
  }, 60_000);
});
