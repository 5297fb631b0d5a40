import { signUp } from '@hwp/platform/test-kit';
import { addMembers, type CrossHostStack, collabAs, type TestUser } from '#collab-test/collab-test-kit';
import { createWorkspace } from '#collab-test/factories';
import type { Fixtures } from '../service-interface.rows';
import { expectOk, type Users } from './fixtures-common';

/** A one-triangle STL: a model the viewer translates. */
const STL =
  'solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n';

/**
 * The collaboration host's fixtures of the contract test, made through its HTTP API as its members
 * would: a workspace with a member per role, parts and versions in each state the rows need, BOMs
 * with lines, shared files with versions, branches, a conflict, locks, a review with a task, tasks,
 * a template, an invitation and a signed URL; and a foreign workspace every member belongs to.
 */
export async function collabFixtures(
  stack: CrossHostStack,
  users: Users,
): Promise<{ fixtures: Fixtures['collab']; foreignWorkspace: string }> {
  const app = stack.collab.app;
  const member = async () => {
    const user = await signUp(stack.api.app);
    const init = expectOk(await collabAs(app, user).post('/v1/users/init').send({}), 'users/init');
    return { user, username: init.body.user.username as string };
  };
  const [owner, manager, engineer, viewer, invitee, stranger] = await Promise.all(
    [1, 2, 3, 4, 5, 6].map(() => member()),
  );
  Object.assign(users, {
    viewer: viewer.user,
    engineer: engineer.user,
    manager: manager.user,
    reviewer: viewer.user,
    'task-owner': viewer.user,
    'task-creator': engineer.user,
    invitee: invitee.user,
  });
  const ws = await createWorkspace(app, owner.user, 'contract');
  await addMembers(stack, ws.id, [
    [manager.user, 'manager'],
    [engineer.user, 'engineer'],
    [viewer.user, 'viewer'],
  ]);
  // Another workspace every member belongs to (as a viewer: the manager stays manager of one only,
  // which the review-template row relies on), holding none of the resources.
  const foreign = await createWorkspace(app, stranger.user, 'contract-foreign');
  await addMembers(stack, foreign.id, [
    [manager.user, 'viewer'],
    [engineer.user, 'viewer'],
    [viewer.user, 'viewer'],
  ]);
  const workspace = ws.name;

  const as = (user: TestUser) => collabAs(app, user);
  const eng = as(engineer.user);
  const mgr = as(manager.user);
  const newPart = async (partNumber: string, extra: Record<string, unknown> = {}) =>
    expectOk(
      await eng
        .post('/v1/parts')
        .send({ workspace, partNumber, name: partNumber, tags: ['contract'], ...extra }),
      `part ${partNumber}`,
      201,
    ).body as { id: string; partNumber: string };
  const newVersion = async (partId: string, status: 'draft' | 'in_review') => {
    const v = expectOk(
      await eng.post(`/v1/parts/${partId}/versions`).send({ revision: 'A' }),
      'version',
      201,
    ).body;
    if (status === 'in_review')
      expectOk(await eng.post(`/v1/parts/${partId}/versions/${v.id}/submit`), 'submit version', 200);
    return { partId, versionId: v.id as string };
  };

  const part = await newPart('CT-PART');
  const [draftPart, approvePart, rejectPart, child, alternate, assembly] = await Promise.all(
    ['CT-DRAFT', 'CT-APPROVE', 'CT-REJECT', 'CT-CHILD', 'CT-ALT', 'CT-ASM'].map((pn) => newPart(pn)),
  );
  const [draft, toApprove, toReject, asmVersion] = await Promise.all([
    newVersion(draftPart.id, 'draft'),
    newVersion(approvePart.id, 'in_review'),
    newVersion(rejectPart.id, 'in_review'),
    newVersion(assembly.id, 'draft'),
  ]);
  const newBom = async (revision: string, status: 'draft' | 'in_review') => {
    const b = expectOk(
      await eng.post('/v1/boms').send({ workspace, assemblyPartId: part.id, type: 'engineering', revision }),
      'bom',
      201,
    ).body;
    const lines = expectOk(
      await eng
        .post(`/v1/boms/${b.id}/items`)
        .send({ items: [{ childPartId: child.id, qty: 1, refdes: 'R1' }] }),
      'bom items',
      200,
    ).body;
    if (status === 'in_review') expectOk(await eng.post(`/v1/boms/${b.id}/submit`), 'submit bom', 200);
    return { id: b.id as string, itemId: lines.tree[0].id as string, revision };
  };
  const bom = await newBom('A', 'draft');
  const [bomToSubmit, bomToApprove, bomToReject] = await Promise.all([
    newBom('S', 'draft'),
    newBom('P', 'in_review'),
    newBom('R', 'in_review'),
  ]);

  // Shared files in the engineer's folder.
  const folder = engineer.username;
  const upload = async (filename: string, content: string, fields: Record<string, string> = {}) => {
    let req = eng.post('/v1/upload').query({ workspace, username: folder });
    for (const [k, v] of Object.entries(fields)) req = req.field(k, v);
    return req.attach('file', Buffer.from(content), { filename, contentType: 'text/plain' });
  };
  const path = (filename: string) => `${workspace}/${folder}/${filename}`;
  const main = expectOk(await upload('drawing.txt', 'first'), 'upload', 201).body;
  expectOk(await upload('drawing.txt', 'second', { baseVersion: main.etag }), 'second version', 201);
  const target = expectOk(await upload('target.txt', 'v1'), 'upload target', 201).body;
  expectOk(await upload('gone.txt', 'bye'), 'upload gone', 201);
  expectOk(await upload('trashed.txt', 'bye'), 'upload trashed', 201);
  const trashed = expectOk(
    await eng.delete('/v1/file').query({ workspace, username: folder, filename: 'trashed.txt' }),
    'trash',
    200,
  ).body;
  const branchOf = async (filename: string, branch: string) => {
    expectOk(await upload(filename, `base of ${branch}`), `upload ${filename}`, 201);
    expectOk(
      await eng.post('/v1/branches/create').send({ workspace, username: folder, base: filename, branch }),
      `branch ${branch}`,
      201,
    );
    return { filename, branch };
  };
  const branched = await branchOf('branched.txt', 'b1');
  const toDeleteBranch = await branchOf('unbranch.txt', 'b2');
  const toMerge = await branchOf('merge.txt', 'b3');
  const conflictBase = expectOk(await upload('clash.txt', 'mine'), 'upload clash', 201).body;
  const stale = await upload('clash.txt', 'theirs', { baseVersion: '0'.repeat(64) });
  if (stale.status !== 409)
    throw new Error(`fixture conflict: ${stale.status} ${JSON.stringify(stale.body)}`);
  const conflict = {
    baseName: path(conflictBase.filename),
    acceptedPath: path(stale.body.conflict.filename),
  };

  const stl = async (filename: string) =>
    expectOk(
      await eng
        .post('/v1/upload')
        .query({ workspace, username: folder })
        .attach('file', Buffer.from(STL), { filename, contentType: 'model/stl' }),
      `upload ${filename}`,
      201,
    );
  await Promise.all([stl('model.stl'), stl('translated.stl')]);
  expectOk(
    await eng.post('/api/viewer/translate-file').send({ workspace, filename: `${folder}/translated.stl` }),
    'translate',
  );

  const lock = async (p: string) =>
    expectOk(await eng.post('/v1/locks/lock').send({ path: p }), `lock ${p}`, 200).body as { lockId: string };
  const lockedPath = path('locked.txt');
  const forceUnlockPath = path('forced.txt');
  const unlockPath = path('unlockable.txt');
  await lock(lockedPath);
  await lock(forceUnlockPath);
  const unlockable = { path: unlockPath, lockId: (await lock(unlockPath)).lockId };

  expectOk(
    await as(viewer.user)
      .post('/v1/comments')
      .send({ path: path('drawing.txt'), body: 'first' }),
    'comment',
  );
  const reviewBody = expectOk(
    await eng.post('/v1/reviews').send({ path: path('drawing.txt'), reviewerEmail: viewer.user.email }),
    'review',
    201,
  ).body;
  const reviewTask = expectOk(
    await as(viewer.user).post(`/v1/reviews/${reviewBody.id}/tasks`).send({ title: 'Holes' }),
    'review task',
    201,
  ).body;
  const newTask = async (title: string, ownerEmail?: string) =>
    expectOk(
      await eng
        .post('/v1/tasks')
        .send({ path: path('drawing.txt'), title, ...(ownerEmail ? { ownerEmail } : {}) }),
      `task ${title}`,
      201,
    ).body.id as string;
  const taskOwned = await newTask('Owned by the viewer', viewer.user.email);
  const taskToDelete = await newTask('To delete');
  const template = expectOk(
    await mgr.post('/v1/review-templates').send({ workspace, name: 'Doomed', checklist: ['x'] }),
    'template',
    201,
  ).body;
  const invitation = expectOk(
    await mgr.post('/api/invitations/send').send({ email: invitee.user.email, workspace, role: 'viewer' }),
    'invitation',
    201,
  ).body;

  const signedUrl = expectOk(
    await as(viewer.user)
      .get('/signed-url')
      .query({ path: `/v1/serve/${workspace}/${folder}/drawing.txt`, ttlMs: 60_000 }),
    'signed url',
  ).body;
  const signed = new URL(signedUrl.url, 'http://collab.invalid');

  const fixtures: Fixtures['collab'] = {
    workspace,
    usernames: {
      owner: owner.username,
      manager: manager.username,
      engineer: engineer.username,
      viewer: viewer.username,
    },
    viewerEmail: viewer.user.email,
    part: { id: part.id },
    draft,
    toApprove,
    toReject,
    childPartId: child.id,
    childPartNumber: child.partNumber,
    alternatePartId: alternate.id,
    assembly: asmVersion,
    bom,
    bomToSubmit: bomToSubmit.id,
    bomToApprove: bomToApprove.id,
    bomToReject: bomToReject.id,
    file: { filename: 'drawing.txt', path: path('drawing.txt'), versionId: main.versionId },
    uploadTarget: { filename: 'target.txt', etag: target.etag },
    fileToDelete: 'gone.txt',
    trashKey: trashed.key,
    branched,
    toDeleteBranch,
    toMerge,
    model: `${folder}/model.stl`,
    translatedModel: `${folder}/translated.stl`,
    lockedPath,
    unlockable,
    forceUnlockPath,
    freePath: path('free.txt'),
    conflict,
    review: { id: reviewBody.id, taskId: reviewTask.id },
    taskOwned,
    taskToDelete,
    templateId: template.id,
    invitationCode: invitation.invitationCode,
    signed: { expires: signed.searchParams.get('expires') ?? '', sig: signed.searchParams.get('sig') ?? '' },
  };
  return { fixtures, foreignWorkspace: foreign.name };
}
