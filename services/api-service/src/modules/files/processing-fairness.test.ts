import { type FileRecord, RoutingKeys } from '@hwp/contracts';
import { expectEventually } from '@hwp/platform/test-kit';
import { as, signUp } from '#test/api-test-kit';
import { upload } from '#test/factories';
import { startFilesApi } from '#test/files-test-setup';

// Issue 34, "heavy jobs never starve small ones": one tenant's batch of uploads does not keep another
// tenant's single upload waiting behind all of it. Production mode (Postgres, RabbitMQ, s3rver); one
// file analysed at a time, so the order files are processed in is the order they were given a turn.
let stack: Awaited<ReturnType<typeof startFilesApi>>;
beforeAll(async () => {
  stack = await startFilesApi({ PROCESSING_CONCURRENCY: '1' });
}, 60_000);
afterAll(() => stack?.stop());

test("another tenant's single upload is processed among the first, not behind a tenant's thirty", async () => {
  const { app, deps } = stack.api;
  const [crowd, single] = await Promise.all([signUp(app), signUp(app)]);
  // The relay is held so all 31 events reach the queue together, the batch first.
  await deps.bus.relay.stop();
  const batch: FileRecord[] = [];
  for (let i = 0; i < 30; i++) batch.push(await upload(as(app, crowd), `batch-${i}.txt`, `file ${i}`));
  const mine = await upload(as(app, single), 'single.txt', 'just one');
  deps.bus.relay.start();

  await expectEventually(
    async () => {
      const states = await Promise.all(
        [...batch.map((f) => [crowd, f] as const), [single, mine] as const].map(
          async ([user, file]) => (await as(app, user).get(`/files/${file.id}`)).body.processing_status,
        ),
      );
      expect(states.filter((s) => s !== 'ready')).toEqual([]);
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  // The order processing committed in, from the consumer's inbox.
  const rows: { revision: string }[] = await deps.dataSource.query(
    `SELECT o.envelope->'data'->>'revisionId' AS revision
       FROM inbox i JOIN outbox o ON o.id = i.event_id
      WHERE o.type = $1 AND i.consumer LIKE '%.file-processing'
      ORDER BY i.processed_at`,
    [RoutingKeys.fileUploaded],
  );
  const order = rows.map((r) => r.revision);
  expect(order).toHaveLength(31);
  // Round-robin by tenant: the batch's first file, its second, then the other tenant's (31st in FIFO).
  expect(order.indexOf(mine.current_revision_id)).toBeLessThan(4);
  // Thirty-one uploads, then up to a minute for the processing: more than jest's default minute.
}, 120_000);
