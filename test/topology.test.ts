import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { expectEventually, s3Env, startS3rver, TEST_AMQP_URL } from '@hwp/platform/test-kit';
import { connect } from 'amqplib';
import { Client } from 'pg';
import { startTwoServices, type TwoServices } from '#test/two-services';

/**
 * The docker-compose topology as separate processes: each service in its own process with the
 * variables docker-compose.yml sets, on real Postgres, RabbitMQ and an S3 server (s3rver).
 */
describe('two services as separate processes on Postgres, RabbitMQ and S3', () => {
  let s3: Awaited<ReturnType<typeof startS3rver>>;
  let services: TwoServices;
  let apiUrl: string;
  let collabUrl: string;
  let opsToken: string;

  beforeAll(async () => {
    s3 = await startS3rver();
    services = await startTwoServices({
      name: 'topo',
      env: s3Env(s3),
    });
    ({ apiUrl, collabUrl, opsToken } = services);
  }, 120_000);

  afterAll(async () => {
    await services?.stop();
    await s3?.stop();
  });

  async function sendProbe(baseUrl: string, path: string, note: string) {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${opsToken}` },
      body: JSON.stringify({ note }),
    });
    expect(res.status).toBe(202);
    return (await res.json()) as { id: string; storage: { key: string; sha256: string } };
  }

  async function getProbe(baseUrl: string, path: string) {
    const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${opsToken}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  it('a message published by the API host through its outbox reaches the collaboration host', async () => {
    const sent = await sendProbe(apiUrl, '/system/probes', 'api to collab');
    const received = await expectEventually(
      async () => {
        const { status, body } = await getProbe(collabUrl, `/v1/system/probes/${sent.id}`);
        expect(status).toBe(200);
        return body;
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
    expect(received).toEqual(
      expect.objectContaining({
        id: sent.id,
        direction: 'received',
        origin: 'api-service',
        note: 'api to collab',
      }),
    );
  });

  it('and the other way round', async () => {
    const sent = await sendProbe(collabUrl, '/v1/system/probes', 'collab to api');
    await expectEventually(
      async () => {
        const { status, body } = await getProbe(apiUrl, `/system/probes/${sent.id}`);
        expect(status).toBe(200);
        expect(body).toEqual(expect.objectContaining({ direction: 'received', origin: 'collab-service' }));
      },
      { timeoutMs: 15_000, intervalMs: 100 },
    );
  });

  it('refuses operator routes without the operator token', async () => {
    const res = await fetch(`${apiUrl}/system/probes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual(expect.objectContaining({ code: 'unauthorized' }));
  });

  it('leaves tables in both databases, the exchange in RabbitMQ and objects in the bucket', async () => {
    for (const name of Object.values(services.databases)) {
      const client = new Client({ connectionString: services.dbUrl(name) });
      await client.connect();
      const { rows } = await client.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
      );
      await client.end();
      expect(rows.map((r) => r.table_name)).toEqual(
        expect.arrayContaining(['bus_probes', 'inbox', 'migrations', 'outbox']),
      );
    }
    const conn = await connect(TEST_AMQP_URL);
    const ch = await conn.createChannel();
    await expect(ch.checkExchange(`topo-${services.suffix}.hwp.events`)).resolves.toBeDefined();
    await conn.close();

    const sent = await sendProbe(apiUrl, '/system/probes', 'storage');
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    });
    const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: 'ops/' }));
    client.destroy();
    expect((listed.Contents ?? []).map((o) => o.Key)).toContain(sent.storage.key);
  });
});
