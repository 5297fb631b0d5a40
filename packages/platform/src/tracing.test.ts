import request from 'supertest';
import { startWidgetService } from '#test/widget-service';
import type { BaseConfig } from './deps';
import type { TestService } from './test-kit/service';
import { tracingEnabled, validTraceparent } from './tracing';

/** Without OTEL_EXPORTER_OTLP_ENDPOINT nothing is recorded or exported, but a caller's trace is passed on. */
describe('tracing when no collector is configured', () => {
  let service: TestService<BaseConfig>;
  const OPS_TOKEN = 'ops-token-for-tracing-tests';

  beforeAll(async () => {
    ({ service } = await startWidgetService({ AMQP_URL: undefined, OPS_TOKEN }));
  }, 60_000);
  afterAll(() => service?.stop());

  it('starts no tracer and carries the incoming traceparent unchanged into the events a request writes', async () => {
    expect(tracingEnabled()).toBe(false);
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const probe = await request(service.app)
      .post('/system/probes')
      .set('Authorization', `Bearer ${OPS_TOKEN}`)
      .set('traceparent', traceparent)
      .send({ note: 'traced' });
    expect(probe.status).toBe(202);
    const rows: { envelope: { traceparent?: string } }[] = await service.deps.dataSource.query(
      'SELECT envelope FROM outbox ORDER BY created_at DESC LIMIT 1',
    );
    expect(rows[0].envelope.traceparent).toBe(traceparent);

    // A malformed or all-zero traceparent is not passed on.
    await request(service.app)
      .post('/system/probes')
      .set('Authorization', `Bearer ${OPS_TOKEN}`)
      .set('traceparent', '00-00000000000000000000000000000000-00f067aa0ba902b7-01')
      .send({ note: 'untraced' })
      .expect(202);
    const [latest]: { envelope: { traceparent?: string } }[] = await service.deps.dataSource.query(
      'SELECT envelope FROM outbox ORDER BY created_at DESC LIMIT 1',
    );
    expect(latest.envelope.traceparent).toBeUndefined();
  });

  it('accepts only well-formed W3C traceparent values', () => {
    expect(validTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBeDefined();
    for (const bad of ['', 'garbage', '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', 42])
      expect(validTraceparent(bad)).toBeUndefined();
  });
});
