import { createHash } from 'node:crypto';
import type { FileLock } from '@hwp/contracts';
import { listen } from '@hwp/platform/test-kit';
import {
  addMembers,
  collabMember,
  type Stack,
  startStack,
  type Team,
  type TestUser,
  teamWorkspace,
} from '#test/collab-test-kit';
import { filesKit } from '#test/shared-files-kit';
import { SseClient } from '#test/sse-client';

let stack: Stack;
let server: Awaited<ReturnType<typeof listen>>;
beforeAll(async () => {
  stack = await startStack({ collab: { UPLOADS_PER_MINUTE: '1000' } });
  server = await listen(stack.collab.app);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await stack?.stop();
});

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('locks', () => {
  let t: Team;
  let kit: ReturnType<typeof filesKit>;
  beforeAll(async () => {
    t = await teamWorkspace(stack, 'locks');
    kit = filesKit(stack, t);
  });

  test('twenty clients lock one path at once: one wins, nineteen get 409', async () => {
    const racers = await Promise.all(Array.from({ length: 20 }, () => collabMember(stack)));
    await addMembers(
      stack,
      t.id,
      racers.map((u): [TestUser, 'engineer'] => [u, 'engineer']),
    );
    const path = kit.path('someone', 'contested.step');
    const stream = await SseClient.open(server.url, `/v1/events?workspace=${t.workspace}`, t.viewer.token);
    try {
      const answers = await Promise.all(racers.map((u) => kit.as(u).post('/v1/locks/lock').send({ path })));
      expect(answers.map((a) => a.status).sort()).toEqual([200, ...Array(19).fill(409)]);
      const winner = answers.find((a) => a.status === 200)?.body as FileLock;
      const current = await kit.as(t.viewer).get('/v1/locks').query({ path }).expect(200);
      expect(current.body).toEqual(winner);
      // Every loser is told who won, even one that raced the winner's commit.
      for (const lost of answers.filter((a) => a.status === 409)) {
        expect(lost.body).toMatchObject({
          code: 'conflict',
          lockedBy: winner.owner,
          lockedUntil: winner.expiresAt,
        });
      }
      // One `lock` event, with the lock as the winner was answered.
      const event = await stream.waitFor((e) => e.type === 'lock' && e.path === path);
      expect(event.data).toEqual({ action: 'locked', ...winner });
      expect(event.actor).toBe(winner.owner);
      await kit.as(t.viewer).get('/v1/locks').query({ path }).expect(200);
      expect(stream.of('lock').filter((e) => e.path === path)).toHaveLength(1);
    } finally {
      stream.close();
    }
  });

  test('attempts racing on one path: the winner’s own attempts refresh its lock, everyone else gets 409', async () => {
    const [a, b, c] = await Promise.all([collabMember(stack), collabMember(stack), collabMember(stack)]);
    await addMembers(stack, t.id, [
      [a, 'engineer'],
      [b, 'engineer'],
      [c, 'engineer'],
    ]);
    const path = kit.path('someone', 'raced-twice.step');
    const attempts = (users: TestUser[]) =>
      Promise.all(users.map((u) => kit.as(u).post('/v1/locks/lock').send({ path })));
    const answers = await attempts([a, b, a, b, a, b, a, b, a, b, a, b]);
    const won = answers.filter((r) => r.status === 200);
    // All of the winner's attempts (the first took the lock, the others refreshed it), none of the other's.
    expect(won).toHaveLength(6);
    const winner = (won[0].body as FileLock).owner;
    expect(new Set(won.map((r) => (r.body as FileLock).lockId)).size).toBe(1);
    expect(won.every((r) => (r.body as FileLock).owner === winner)).toBe(true);
    const lost = answers.filter((r) => r.status === 409);
    expect(lost).toHaveLength(6);
    for (const r of lost) expect(r.body).toMatchObject({ code: 'conflict', lockedBy: winner });

    // Held by another user before the race: every attempt is a 409 naming the holder.
    const held = (
      await kit
        .as(c)
        .post('/v1/locks/lock')
        .send({ path: `${path}.2` })
        .expect(200)
    ).body as FileLock;
    const again = await Promise.all(
      [a, b, a, b].map((u) =>
        kit
          .as(u)
          .post('/v1/locks/lock')
          .send({ path: `${path}.2` }),
      ),
    );
    expect(again.map((r) => r.status)).toEqual([409, 409, 409, 409]);
    for (const r of again)
      expect(r.body).toMatchObject({ lockedBy: held.owner, lockedUntil: held.expiresAt });
    // Released: the next attempt takes it.
    const second = `${path}.2`;
    await kit.as(c).post('/v1/locks/unlock').send({ path: second, lockId: held.lockId }).expect(200);
    const taken = await kit.as(a).post('/v1/locks/lock').send({ path: second }).expect(200);
    const now = await kit.as(b).get('/v1/locks').query({ path: second }).expect(200);
    expect(now.body).toEqual(taken.body);
  });

  test('while locked, others’ upload, delete, revert and merge get 423; after the ttl the lock is gone', async () => {
    const owner = await kit.username(t.engineer);
    const first = await kit.upload(t.engineer, owner, 'part.step', 'v1').expect(201);
    await kit.upload(t.engineer, owner, 'part.step', 'v2', { baseVersion: sha('v1') }).expect(201);
    await kit
      .as(t.engineer)
      .post('/v1/branches/create')
      .send({ workspace: t.workspace, username: owner, base: 'part.step', branch: 'alt' })
      .expect(201);
    const path = kit.path(owner, 'part.step');
    const lock = (await kit.as(t.engineer).post('/v1/locks/lock').send({ path, ttlMs: 60_000 }).expect(200))
      .body as FileLock;
    expect(lock.ttlMs).toBe(60_000);
    // The manager may write any folder, but not a path someone else locked.
    const q = { workspace: t.workspace, username: owner, filename: 'part.step' };
    for (const res of [
      await kit.upload(t.manager, owner, 'part.step', 'v3', { baseVersion: sha('v2') }),
      await kit.as(t.manager).delete('/v1/file').query(q),
      await kit.as(t.manager).post('/v1/revert').send({ path, versionId: first.body.versionId }),
      await kit.as(t.manager).post('/v1/merge').send({
        workspace: t.workspace,
        username: owner,
        filename: 'part.step',
        fromBranch: 'alt',
        force: true,
      }),
    ]) {
      expect({ status: res.status, code: res.body.code, lockedBy: res.body.lockedBy }).toEqual({
        status: 423,
        code: 'locked',
        lockedBy: owner,
      });
    }
    // Reads are never blocked; the holder writes.
    await kit.as(t.viewer).get('/v1/filemeta').query(q).expect(200);
    await kit.upload(t.engineer, owner, 'part.step', 'v3', { baseVersion: sha('v2') }).expect(201);
    // Time passes (the expiry is a timestamp; nothing runs when it comes).
    await stack.collab.deps.dataSource.query(
      "UPDATE shared_file_locks SET expires_at = now() - interval '1 second' WHERE lock_id = $1",
      [lock.lockId],
    );
    const unlocked = await kit.as(t.viewer).get('/v1/locks').query({ path }).expect(200);
    expect(unlocked.text).toBe('null');
    await kit.upload(t.manager, owner, 'part.step', 'v4', { baseVersion: sha('v3') }).expect(201);
  });

  test('unlock needs the lock id; ttl below a minute is 400; force-unlock tells the owner and comments', async () => {
    const path = kit.path('shared', 'board.kicad_pcb');
    await kit.as(t.engineer).post('/v1/locks/lock').send({ path, ttlMs: 59_999 }).expect(400);
    const lock = (await kit.as(t.engineer).post('/v1/locks/lock').send({ path }).expect(200))
      .body as FileLock;
    expect(lock.ttlMs).toBe(10 * 60 * 1000);
    const again = (await kit.as(t.engineer).post('/v1/locks/lock').send({ path, ttlMs: 120_000 }).expect(200))
      .body as FileLock;
    expect(again.lockId).toBe(lock.lockId);
    await kit
      .as(t.engineer)
      .post('/v1/locks/unlock')
      .send({ path, lockId: '01a20fb0-0000-7000-8000-000000000000' })
      .expect(403);
    // Every member sees the lock id (GET /v1/locks): it is no key. Another engineer holding it
    // cannot release the lock; it stays the holder's.
    const other = await collabMember(stack);
    await addMembers(stack, t.id, [[other, 'engineer']]);
    const seen = await kit.as(other).get('/v1/locks').query({ path }).expect(200);
    expect(seen.body.lockId).toBe(lock.lockId);
    await kit.as(other).post('/v1/locks/unlock').send({ path, lockId: lock.lockId }).expect(403);
    const still = await kit.as(t.viewer).get('/v1/locks').query({ path }).expect(200);
    expect(still.body).toMatchObject({ lockId: lock.lockId, owner: lock.owner });

    const stream = await SseClient.open(server.url, `/v1/events?workspace=${t.workspace}`, t.engineer.token);
    try {
      const asked = await kit.as(t.viewer).post('/v1/locks/request').send({ path }).expect(200);
      expect(asked.body).toEqual({ notified: true });
      const request = await stream.waitFor((e) => e.type === 'lock.request');
      expect(request.data).toMatchObject({ path, from: await kit.username(t.viewer) });
      await kit.as(t.engineer).post('/v1/locks/force-unlock').send({ path }).expect(403);
      await kit
        .as(t.manager)
        .post('/v1/locks/force-unlock')
        .send({ path, message: 'release for ECO-7' })
        .expect(200, { unlocked: true });
      const told = await stream.waitFor((e) => e.type === 'unlock' && e.to !== undefined);
      expect(told.data).toMatchObject({ action: 'force-unlocked', path, message: 'release for ECO-7' });
    } finally {
      stream.close();
    }
    const comments = await kit.as(t.viewer).get('/v1/comments').query({ path }).expect(200);
    expect(comments.body.items[0].body).toContain('release for ECO-7');
    await kit
      .as(t.engineer)
      .post('/v1/locks/unlock')
      .send({ path, lockId: lock.lockId })
      .expect(200, { unlocked: false });
  });

  test('lock-all and unlock-all (managers) skip what others hold', async () => {
    const t2 = await teamWorkspace(stack, 'lockall');
    const k2 = filesKit(stack, t2);
    const me = await k2.username(t2.engineer);
    for (const name of ['a.txt', 'b.txt', 'c.txt']) await k2.upload(t2.engineer, me, name, name).expect(201);
    await k2
      .as(t2.engineer)
      .post('/v1/locks/lock')
      .send({ path: k2.path(me, 'a.txt') })
      .expect(200);
    await k2.as(t2.engineer).post('/v1/locks/lock-all').send({ workspace: t2.workspace }).expect(403);
    const all = await k2
      .as(t2.manager)
      .post('/v1/locks/lock-all')
      .send({ workspace: t2.workspace })
      .expect(200);
    expect(all.body).toEqual({ count: 2, skipped: [k2.path(me, 'a.txt')] });
    await k2.upload(t2.engineer, me, 'b.txt', 'b2', { baseVersion: sha('b.txt') }).expect(423);
    expect(
      (await k2.as(t2.manager).post('/v1/locks/unlock-all').send({ workspace: t2.workspace }).expect(200))
        .body.count,
    ).toBe(3);
    await k2.upload(t2.engineer, me, 'b.txt', 'b2', { baseVersion: sha('b.txt') }).expect(201);
  });
});

describe('comments and mentions', () => {
  test('a mention reaches the mentioned member’s stream only', async () => {
    const t = await teamWorkspace(stack, 'mention');
    const kit = filesKit(stack, t);
    const viewerName = await kit.username(t.viewer);
    const path = kit.path(await kit.username(t.engineer), 'spec.md');
    const mentioned = await SseClient.open(server.url, `/v1/events?workspace=${t.workspace}`, t.viewer.token);
    const bystander = await SseClient.open(
      server.url,
      `/v1/events?workspace=${t.workspace}`,
      t.manager.token,
    );
    try {
      const posted = await kit
        .as(t.engineer)
        .post('/v1/comments')
        .send({ path, body: `@${viewerName} please check, and @nobody-here` })
        .expect(201);
      expect(posted.body.mentions).toEqual([viewerName]);
      const mention = await mentioned.waitFor((e) => e.type === 'mention');
      expect(mention.data).toMatchObject({ commentId: posted.body.id, path });
      // The bystander sees the comment, and no mention.
      await bystander.waitFor(
        (e) => e.type === 'comment' && (e.data as { id: string }).id === posted.body.id,
      );
      expect(bystander.of('mention')).toEqual([]);
    } finally {
      mentioned.close();
      bystander.close();
    }
    const mails: { to: string }[] = await stack.collab.deps.dataSource.query(
      `SELECT envelope->'data'->>'to' AS to FROM outbox WHERE envelope->>'workspace' = $1 AND envelope->'data'->>'template' = 'mention'`,
      [t.workspace],
    );
    expect(mails).toHaveLength(1);
  });
});
