import { join } from 'node:path';
import { RoutingKeys } from '@hwp/contracts';
import { binaryStl, boxTriangles } from '@hwp/geometry/test-kit';
import type { Stack, Team } from '#test/collab-test-kit';
import type { filesKit } from '#test/shared-files-kit';
import { viewerTestKit } from '#test/viewer-kit';
import { collabService } from '../../service';
import { recordJob, requeueJob } from './translations.repository';
import type { ViewerExports } from './viewer.feature';

/** Translation jobs: one run per claim across workers, stalled and lapsed claims, the caps. */
let stack: Stack;
let t: Team;
let kit: ReturnType<typeof filesKit>;
let folder: string;
const viewer = viewerTestKit('viewer-jobs');
const { translate, settled } = viewer;
beforeAll(() => {
  ({ stack, t, kit, folder } = viewer);
});

describe('model translation', () => {
  test('two workers never run the same job, however often it is queued', async () => {
    // A second process on the same database, broker and blob store (as replicas share S3).
    const { config } = stack.collab.deps;
    const replica = await stack.startCollabReplica({
      BLOB_DIR: config.BLOB_DIR ?? join(config.DATA_DIR, stack.collab.deps.service, 'blobs'),
    });
    const triangles = boxTriangles(3, 3, 3);
    await kit.upload(t.engineer, folder, 'twice.stl', binaryStl(triangles)).expect(201);
    const job = await translate('twice.stl').expect(202);
    // The same job queued three more times (a redelivery, a replayed outbox), to both processes.
    for (let i = 0; i < 3; i++) {
      await stack.collab.deps.bus.transaction((manager) =>
        stack.collab.deps.bus.outbox.add(manager, {
          type: RoutingKeys.translationRequested,
          workspace: t.workspace,
          actor: 'test',
          data: { translationId: job.body.modelId },
        }),
      );
    }
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    // And straight claims from both processes at once on a fresh job (no message queued): one runs it.
    const raceId = '01a2f000-0000-7000-8000-000000000001';
    await stack.collab.deps.dataSource.query(
      `INSERT INTO model_translations (id, workspace_id, file_id, version_id, branch, name, format, options_key)
       SELECT $2, workspace_id, file_id, version_id, branch, name, format, 'race' FROM model_translations WHERE id = $1`,
      [job.body.modelId, raceId],
    );
    const workers = [stack.collab.deps, replica.deps].map(
      (deps) => collabService.exportsOf<ViewerExports>(deps, 'viewer').worker,
    );
    const ran = await Promise.all([...workers, ...workers].map((w) => w.run(raceId)));
    expect(ran.filter(Boolean)).toHaveLength(1);
    const rows = await stack.collab.deps.dataSource.query(
      'SELECT id, attempts, status FROM model_translations WHERE id = ANY($1::uuid[]) ORDER BY created_at',
      [[job.body.modelId, raceId]],
    );
    expect(rows.map((r: { attempts: number; status: string }) => [r.attempts, r.status])).toEqual([
      [1, 'success'],
      [1, 'success'],
    ]);
    const claims = await stack.collab.deps.dataSource.query(
      `SELECT count(*)::int AS n FROM collab_events WHERE type = 'translation' AND data->>'modelId' = $1 AND data->>'stage' = 'claimed'`,
      [job.body.modelId],
    );
    expect(claims[0].n).toBe(1);
  });

  test('a job whose worker stopped is run again when asked for; past its attempts it ends failed', async () => {
    await kit.upload(t.engineer, folder, 'killed.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const job = await translate('killed.stl').expect(202);
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    // As if its process had been killed mid-translation an hour ago, after one attempt.
    const stall = (attempts: number) =>
      stack.collab.deps.dataSource.query(
        `UPDATE model_translations SET status = 'inprogress', progress = 40, attempts = $2, claimed_by = 'gone',
                claimed_at = now() - interval '1 hour', glb_key = NULL WHERE id = $1`,
        [job.body.modelId, attempts],
      );
    await stall(1);
    const again = await translate('killed.stl').expect(200);
    expect(again.body.modelId).toBe(job.body.modelId);

    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    await stall(2);
    await translate('killed.stl').expect(200);

    const given = await settled(job.body.modelId);
    expect(given).toMatchObject({ status: 'failed' });
    expect(given.reason).toMatch(/did not finish in 2 attempts/);
  });

  test('a job whose process died is taken over once its lease runs out, unasked, well within its time limit', async () => {
    await kit.upload(t.engineer, folder, 'lapsed.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const job = await translate('lapsed.stl').expect(202);
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    // As if its process had been killed five seconds into its run (the time limit is 300 s).
    await stack.collab.deps.dataSource.query(
      `UPDATE model_translations SET status = 'inprogress', progress = 40, attempts = 1, claimed_by = 'gone',
              claimed_at = now() - interval '5 seconds', lease_until = now() - interval '1 second',
              glb_key = NULL, finished_at = NULL WHERE id = $1`,
      [job.body.modelId],
    );
    // Nobody asks again: the sweep takes it over and runs it.
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    const [row] = await stack.collab.deps.dataSource.query(
      'SELECT attempts, claimed_by, lease_until FROM model_translations WHERE id = $1',
      [job.body.modelId],
    );
    expect(row.attempts).toBe(2);
    expect(row.claimed_by).not.toBe('gone');
  });

  test('a job whose lease is renewed is not taken over, however long ago it was claimed', async () => {
    await kit.upload(t.engineer, folder, 'leased.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const job = await translate('leased.stl').expect(202);
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    // Claimed an hour ago by a process that is still running it: its lease runs another minute.
    await stack.collab.deps.dataSource.query(
      `UPDATE model_translations SET status = 'inprogress', progress = 40, attempts = 1, claimed_by = 'alive',
              claimed_at = now() - interval '1 hour', lease_until = now() + interval '1 minute',
              glb_key = NULL, finished_at = NULL WHERE id = $1`,
      [job.body.modelId],
    );
    const again = await translate('leased.stl').expect(200);
    expect([again.body.modelId, again.body.status]).toEqual([job.body.modelId, 'inprogress']);
    // Several sweeps later (every 500 ms here) it is still the live worker's.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const [row] = await stack.collab.deps.dataSource.query(
      'SELECT status, attempts, claimed_by FROM model_translations WHERE id = $1',
      [job.body.modelId],
    );
    expect(row).toEqual({ status: 'inprogress', attempts: 1, claimed_by: 'alive' });
    await stack.collab.deps.dataSource.query(
      `UPDATE model_translations SET status = 'failed', reason = 'test over' WHERE id = $1`,
      [job.body.modelId],
    );
  });

  test('a worker whose job was taken over after its lease ran out records nothing more on it', async () => {
    await kit.upload(t.engineer, folder, 'taken.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const job = await translate('taken.stl').expect(202);
    expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
    // This process claimed it, stalled past its lease, and another process has claimed it since.
    const { dataSource } = stack.collab.deps;
    await dataSource.query(
      `UPDATE model_translations SET status = 'inprogress', progress = 40, attempts = 2, claimed_by = 'newer',
              lease_until = now() + interval '1 minute', glb_key = NULL, finished_at = NULL WHERE id = $1`,
      [job.body.modelId],
    );
    const { worker } = collabService.exportsOf<ViewerExports>(stack.collab.deps, 'viewer');
    // The stalled run's late failure (its time limit, say) does not end the newer run's job.
    expect(await recordJob(dataSource.manager, job.body.modelId, worker.id, { failed: 'late' })).toBeNull();
    const row = async () =>
      (
        await dataSource.query(
          'SELECT status, progress, reason, claimed_by FROM model_translations WHERE id = $1',
          [job.body.modelId],
        )
      )[0];
    expect(await row()).toEqual({ status: 'inprogress', progress: 40, reason: null, claimed_by: 'newer' });
    // Nor does its giving the job back (its source read failed): the newer run keeps it.
    await requeueJob(dataSource.manager, job.body.modelId, { heldBy: worker.id });
    expect(await row()).toEqual({ status: 'inprogress', progress: 40, reason: null, claimed_by: 'newer' });
    // The claimant's own progress is recorded.
    expect(await recordJob(dataSource.manager, job.body.modelId, 'newer', { progress: 60 })).toMatchObject({
      progress: 60,
    });
    await dataSource.query(
      `UPDATE model_translations SET status = 'failed', reason = 'test over' WHERE id = $1`,
      [job.body.modelId],
    );
  });

  test('a run whose result is refused at the end leaves no GLB; the run that takes over stores its own', async () => {
    const { dataSource, blobs } = stack.collab.deps;
    // The database refuses the first attempt's final write, as it does once another worker holds
    // the claim; that run's lease then runs out and the sweep queues the job again.
    await dataSource.query(
      `CREATE FUNCTION refuse_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
       CREATE TRIGGER refuse_success BEFORE UPDATE ON model_translations FOR EACH ROW
         WHEN (NEW.status = 'success' AND NEW.attempts = 1 AND NEW.name LIKE '%refused.stl')
         EXECUTE FUNCTION refuse_row();`,
    );
    try {
      await kit.upload(t.engineer, folder, 'refused.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
      const job = await translate('refused.stl').expect(202);
      expect(await settled(job.body.modelId)).toMatchObject({ status: 'success' });
      const glbKey = (attempt: number) => `translations/${t.id}/${job.body.modelId}.${attempt}.glb`;
      const [stored] = await dataSource.query(
        'SELECT glb_key, attempts FROM model_translations WHERE id = $1',
        [job.body.modelId],
      );
      expect(stored).toEqual({ glb_key: glbKey(2), attempts: 2 });
      expect(await blobs.head(glbKey(2))).not.toBeNull();
      expect(await blobs.head(glbKey(1))).toBeNull();
    } finally {
      await dataSource.query(
        'DROP TRIGGER IF EXISTS refuse_success ON model_translations; DROP FUNCTION IF EXISTS refuse_row()',
      );
    }
  });

  test('translations are bounded per version (8 option sets, 409) and per user (4 waiting, 429)', async () => {
    await kit.upload(t.engineer, folder, 'variants.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const first = await translate('variants.stl', { simplify: 0.5 }).expect(202);
    // Seven more option sets of that version exist (rows as finished jobs would leave them).
    await stack.collab.deps.dataSource.query(
      `INSERT INTO model_translations (id, workspace_id, file_id, version_id, branch, name, format, options_key, status, requested_by)
       SELECT gen_random_uuid(), workspace_id, file_id, version_id, branch, name, format, 'v' || n, 'failed', requested_by
         FROM model_translations, generate_series(1, 7) AS n WHERE id = $1`,
      [first.body.modelId],
    );
    const ninth = await translate('variants.stl', { simplify: 0.25 });
    expect([ninth.status, ninth.body.code]).toEqual([409, 'conflict']);
    // Asking again for an existing option set is never refused.
    expect((await translate('variants.stl', { simplify: 0.5 })).status).toBe(200);
    // With one option set left, three members asking for new ones at once: one gets it.
    await stack.collab.deps.dataSource.query(
      `DELETE FROM model_translations WHERE version_id = (SELECT version_id FROM model_translations WHERE id = $1)
         AND options_key = 'v7'`,
      [first.body.modelId],
    );
    const racers = await Promise.all(
      [t.owner, t.manager, t.engineer].map((user, i) =>
        kit
          .as(user)
          .post('/api/viewer/translate-file')
          .send({ workspace: t.workspace, filename: `${folder}/variants.stl`, simplify: 0.1 + i / 10 }),
      ),
    );
    expect(racers.map((res) => res.status).sort()).toEqual([202, 409, 409]);

    // Four jobs of the viewer waiting: the fifth is 429 with Retry-After.
    await kit.upload(t.engineer, folder, 'queue.stl', binaryStl(boxTriangles(2, 2, 2))).expect(201);
    const queued = await translate('queue.stl', { simplify: 0.9 }).expect(202);
    const viewerId = t.viewer.user.id;
    await stack.collab.deps.dataSource.query(
      `INSERT INTO model_translations (id, workspace_id, file_id, version_id, branch, name, format, options_key, status, requested_by, updated_at)
       SELECT gen_random_uuid(), workspace_id, file_id, version_id, branch, name, format, 'q' || n, 'pending', $2, now()
         FROM model_translations, generate_series(1, 4) AS n WHERE id = $1`,
      [queued.body.modelId, viewerId],
    );
    const fifth = await translate('queue.stl', { simplify: 0.8 });
    expect([fifth.status, fifth.body.code, fifth.headers['retry-after']]).toEqual([
      429,
      'rate_limited',
      '30',
    ]);
    await stack.collab.deps.dataSource.query(
      `DELETE FROM model_translations WHERE version_id = (SELECT version_id FROM model_translations WHERE id = $1)
         AND options_key LIKE 'q%'`,
      [queued.body.modelId],
    );
  });
});
