import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { expectEventually, type FakeSmtp, startFakeSmtp, uniqueEmail } from '@hwp/platform/test-kit';
import { confirmedUser } from '#test/confirmed-user';
import { startTwoServices, type TwoServices } from '#test/two-services';

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
}

/** A local OTLP/HTTP collector: takes `POST /v1/traces` (JSON, as the exporter sends it) and keeps the spans. */
async function startCollector(): Promise<{ url: string; spans: ExportedSpan[]; close(): Promise<void> }> {
  const spans: ExportedSpan[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const payload = JSON.parse(body.toString('utf8')) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: { stringValue?: string } }[] };
            scopeSpans: { spans: Omit<ExportedSpan, 'service'>[] }[];
          }[];
        };
        for (const resource of payload.resourceSpans) {
          const service =
            resource.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
          for (const scope of resource.scopeSpans)
            for (const span of scope.spans) spans.push({ ...span, service });
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Both services as processes with OTEL_EXPORTER_OTLP_ENDPOINT set: one request to the collaboration
 * host that writes an event the API host consumes gives spans of one trace in both services.
 */
describe('distributed tracing across both services and the broker', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let smtp: FakeSmtp;
  let services: TwoServices;

  beforeAll(async () => {
    collector = await startCollector();
    smtp = await startFakeSmtp('mailer', 'tracing');
    services = await startTwoServices({
      name: 'trace',
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
      apiEnv: { SMTP_URL: smtp.url },
    });
  }, 120_000);

  afterAll(async () => {
    await services?.stop();
    await smtp?.stop();
    await collector?.close();
  });

  it('continues the caller’s trace from the HTTP request through the outbox into the other service’s consumer', async () => {
    const { token } = await confirmedUser(services.apiUrl, smtp, 'trace');
    const collab = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${services.collabUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    expect((await collab('POST', '/v1/users/init', {})).status).toBe(200);
    const workspace = `tr-${randomBytes(4).toString('hex')}`;
    expect((await collab('POST', '/v1/workspaces', { name: workspace })).status).toBe(201);

    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const invitee = uniqueEmail('trace-invitee');
    const sent = await collab(
      'POST',
      '/api/invitations/send',
      { workspace, email: invitee },
      { traceparent: `00-${traceId}-${callerSpan}-01` },
    );
    expect(sent.status).toBe(201);
    // The API host's notifier consumed the event: the invitation email went out.
    await smtp.nextMessage(invitee);

    const inTrace = await expectEventually(
      () => {
        const spans = collector.spans.filter((s) => s.traceId === traceId);
        const server = spans.find(
          (s) => s.service === 'collab-service' && s.name === 'POST /api/invitations/send',
        );
        const consumer = spans.find(
          (s) => s.service === 'api-service' && s.name.startsWith('process notification.requested'),
        );
        expect(server).toBeDefined();
        expect(consumer).toBeDefined();
        return { spans, server: server!, consumer: consumer! };
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    // The HTTP span is the caller's child; the consumer is the child of the span that wrote the event.
    expect(inTrace.server.parentSpanId).toBe(callerSpan);
    expect(inTrace.consumer.parentSpanId).toBe(inTrace.server.spanId);
    expect(new Set(inTrace.spans.map((s) => s.service))).toEqual(new Set(['collab-service', 'api-service']));
    const publish = inTrace.spans.find(
      (s) => s.service === 'collab-service' && s.name.startsWith('publish '),
    );
    expect(publish?.parentSpanId).toBe(inTrace.server.spanId);
  });
});
