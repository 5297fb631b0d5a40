import request from 'supertest';
import { makeWidgets, startWidgetService, WIDGET_EVENT, type WidgetHandler } from '#test/widget-service';
import type { BaseConfig } from '../deps';
import { expectEventually } from '../test-kit/eventually';
import { parseMetrics, seriesValue } from '../test-kit/prometheus-text';
import { TEST_AMQP_URL, type TestService } from '../test-kit/service';
import { TcpProxy } from '../test-kit/tcp-proxy';

const OPS_TOKEN = 'ops-token-for-metrics-tests';

/** A service on RabbitMQ reached through a TCP proxy the test can cut, scraped as Prometheus does. */
describe('GET /metrics', () => {
  let proxy: TcpProxy;
  let service: TestService<BaseConfig>;
  let handler: { current: WidgetHandler };

  beforeAll(async () => {
    const broker = new URL(TEST_AMQP_URL);
    proxy = await TcpProxy.create({ host: broker.hostname, port: Number(broker.port || 5672) });
    ({ service, handler } = await startWidgetService({
      AMQP_URL: proxy.rewriteUrl(TEST_AMQP_URL),
      OPS_TOKEN,
      OUTBOX_POLL_MS: '100',
      BUS_MAX_ATTEMPTS: '2',
      BUS_RETRY_DELAY_MS: '50',
    }));
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    await proxy?.close();
  });

  async function scrape() {
    const res = await request(service.app).get('/metrics').set('Authorization', `Bearer ${OPS_TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseMetrics(res.text);
  }

  it('needs the operator token', async () => {
    expect((await request(service.app).get('/metrics')).status).toBe(401);
    expect((await request(service.app).get('/metrics').set('Authorization', 'Bearer wrong')).status).toBe(
      401,
    );
  });

  it('the reader refuses text that is not the exposition format', () => {
    expect(() => parseMetrics('hwp_x{a="1" 2\n')).toThrow();
    expect(() => parseMetrics('# TYPE h histogram\nh_bucket{le="1"} 2\nh_count 1\n')).toThrow();
  });

  it('parses, and times requests by route template and status, never by raw URL', async () => {
    await request(service.app).get('/readyz').expect(200);
    await request(service.app).get('/no/such/path/12345').expect(404);
    const metrics = await scrape();
    const http = metrics.get('hwp_http_request_duration_seconds');
    expect(http?.type).toBe('histogram');
    expect(
      seriesValue(metrics, 'hwp_http_request_duration_seconds', { route: '/readyz', status: '200' }),
    ).toBe(1);
    expect(
      seriesValue(metrics, 'hwp_http_request_duration_seconds', { route: 'unmatched', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(http)).not.toContain('/no/such/path');
    for (const name of [
      'hwp_outbox_pending',
      'hwp_outbox_oldest_pending_age_seconds',
      'hwp_dead_letters',
      'hwp_nodejs_eventloop_lag_p99_seconds',
      'hwp_process_resident_memory_bytes',
    ])
      expect([name, metrics.has(name)]).toEqual([name, true]);
    expect(seriesValue(metrics, 'hwp_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
    expect(metrics.get('hwp_outbox_pending')?.samples[0].labels).toMatchObject({ service: 'widget-service' });
  });

  it('counts publishes and deliveries; the outbox gauges rise while the broker is unreachable and fall after', async () => {
    await makeWidgets(service, 1);
    await expectEventually(async () => {
      const metrics = await scrape();
      expect(
        seriesValue(metrics, 'hwp_bus_published_total', { routing_key: WIDGET_EVENT }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        seriesValue(metrics, 'hwp_bus_deliveries_total', { outcome: 'consumed' }),
      ).toBeGreaterThanOrEqual(1);
      expect(seriesValue(metrics, 'hwp_outbox_pending')).toBe(0);
    });

    await proxy.stop();
    try {
      await makeWidgets(service, 3);
      await expectEventually(
        async () => {
          const metrics = await scrape();
          expect(seriesValue(metrics, 'hwp_outbox_pending')).toBe(3);
          expect(seriesValue(metrics, 'hwp_outbox_oldest_pending_age_seconds')).toBeGreaterThan(0.5);
        },
        { timeoutMs: 10_000 },
      );
    } finally {
      await proxy.start();
    }
    await expectEventually(
      async () => {
        const metrics = await scrape();
        expect(seriesValue(metrics, 'hwp_outbox_pending')).toBe(0);
        expect(seriesValue(metrics, 'hwp_outbox_oldest_pending_age_seconds')).toBe(0);
        // Consumed too, not only published: the next test's failing handler must not meet these four
        // (the relay can publish before the consumer's own connection is back).
        expect(
          seriesValue(metrics, 'hwp_bus_deliveries_total', { outcome: 'consumed' }),
        ).toBeGreaterThanOrEqual(4);
      },
      { timeoutMs: 30_000 },
    );
  }, 60_000);

  it('counts a retry and a dead letter, and shows the depth of the RabbitMQ dead-letter queue', async () => {
    handler.current = async () => {
      throw new Error('injected handler failure');
    };
    await makeWidgets(service, 1);
    await expectEventually(
      async () => {
        const metrics = await scrape();
        expect(seriesValue(metrics, 'hwp_bus_deliveries_total', { outcome: 'retried' })).toBe(1);
        expect(seriesValue(metrics, 'hwp_bus_deliveries_total', { outcome: 'dead_lettered' })).toBe(1);
        // Queues carry the run's AMQP namespace as a prefix.
        const dlq = metrics
          .get('hwp_dead_letter_queue_messages')
          ?.samples.find((sample) => sample.labels.queue?.endsWith('widget-service.widgets.dlq'));
        expect(dlq?.value).toBe(1);
      },
      { timeoutMs: 15_000 },
    );
  }, 30_000);
});
