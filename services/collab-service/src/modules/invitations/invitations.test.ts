import { randomBytes } from 'node:crypto';
import type { Invitation } from '@hwp/contracts';
import { expectEventually, latestMessage, linkIn, uniqueEmail } from '@hwp/platform/test-kit';
import request from 'supertest';
import {
  type CrossHostStack,
  collabAs,
  newUser,
  startCrossHostStack,
  type TestUser,
} from '#test/collab-test-kit';

const SITE_URL = 'https://app.example.test';

let stack: CrossHostStack;
beforeAll(async () => {
  stack = await startCrossHostStack({ collab: { SITE_URL } });
}, 60_000);
afterAll(() => stack?.stop());

async function workspaceOf(owner: TestUser): Promise<string> {
  const name = `ws-${randomBytes(5).toString('hex')}`;
  await collabAs(stack.collab.app, owner).post('/v1/workspaces').send({ name }).expect(201);
  return name;
}

/** Sends an invitation as `sender` and returns the code from the email the API host's notifier kept. */
async function invite(sender: TestUser, body: { email: string; workspace: string; role?: string }) {
  const sent = await collabAs(stack.collab.app, sender).post('/api/invitations/send').send(body);
  expect(sent.status).toBe(201);
  return sent.body as Invitation & { invitationCode: string };
}

/** Brings a user into the workspace with the role, the way the product does: invite, then accept. */
async function join(owner: TestUser, workspace: string, role: string): Promise<TestUser> {
  const user = await newUser(stack);
  const { invitationCode } = await invite(owner, { email: user.email, workspace, role });
  await collabAs(stack.collab.app, user).post('/api/invitations/accept').send({ invitationCode }).expect(200);
  return user;
}

const validate = (invitationCode: string) =>
  request(stack.collab.app).post('/api/invitations/validate').send({ invitationCode });

describe('invitations', () => {
  test('an emailed code is validated without login, accepted once, and makes the invitee a member', async () => {
    const owner = await newUser(stack);
    const invitee = await newUser(stack);
    const workspace = await workspaceOf(owner);

    const sent = await invite(owner, { email: invitee.email, workspace });
    expect(sent).toMatchObject({ email: invitee.email, workspace, role: 'engineer', status: 'pending' });
    expect(sent.invitationCode).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const ttlMs = new Date(sent.expiresAt).getTime() - new Date(sent.createdAt).getTime();
    expect(ttlMs).toBe(7 * 86_400_000);

    // The notification travelled collab outbox -> broker -> API host notifier -> dev mailbox.
    const mail = await latestMessage(stack.api.app, invitee.email, 'invitation');
    const link = linkIn(mail);
    expect(`${link.origin}${link.pathname}`).toBe(`${SITE_URL}/invite`);
    const code = link.searchParams.get('code') as string;
    expect(code).toBe(sent.invitationCode);
    expect(mail.text).toContain(code);
    expect(mail.subject).toContain(workspace);

    const check = await validate(code);
    expect(check.status).toBe(200);
    expect(check.body).toEqual({
      valid: true,
      workspace,
      role: 'engineer',
      email: invitee.email,
      expiresAt: sent.expiresAt,
    });

    const accepted = await collabAs(stack.collab.app, invitee)
      .post('/api/invitations/accept')
      .send({ invitationCode: code });
    expect(accepted.status).toBe(200);
    expect(accepted.body).toEqual({ workspace, role: 'engineer' });
    const members = await collabAs(stack.collab.app, invitee).get(`/v1/workspaces/${workspace}/members`);
    expect(members.status).toBe(200);
    expect(members.body.items).toEqual(
      expect.arrayContaining([expect.objectContaining({ email: invitee.email, role: 'engineer' })]),
    );

    // Single use.
    const again = await collabAs(stack.collab.app, invitee)
      .post('/api/invitations/accept')
      .send({ invitationCode: code });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: 'conflict',
      reason: 'accepted',
      path: '/api/invitations/accept',
    });
    expect((await validate(code)).body).toMatchObject({ valid: false, reason: 'accepted', workspace });

    // Inviting a member is a conflict.
    const member = await collabAs(stack.collab.app, owner)
      .post('/api/invitations/send')
      .send({ email: invitee.email.toUpperCase(), workspace });
    expect(member.status).toBe(409);
  });

  test('the email names the signed-in sender: an invitedBy in the body never reaches it', async () => {
    const owner = await newUser(stack, { first_name: 'Grace', last_name: 'Hopper' });
    const invitee = await newUser(stack);
    const workspace = await workspaceOf(owner);
    // The display name comes over from the API host (user.updated.v1).
    await expectEventually(async () => {
      const [row] = await stack.collab.deps.dataSource.query(
        'SELECT display_name FROM collab_users WHERE id = $1',
        [owner.user.id],
      );
      expect(row?.display_name).toBe('Grace Hopper');
    });

    const crafted = 'IT support <it@example.com>';
    const sent = await collabAs(stack.collab.app, owner)
      .post('/api/invitations/send')
      .send({ email: invitee.email, workspace, invitedBy: crafted });
    expect(sent.status).toBe(201);
    expect(sent.body.invitedBy).toBe('Grace Hopper');

    const mail = await latestMessage(stack.api.app, invitee.email, 'invitation');
    expect(mail.subject).toBe(`Grace Hopper invited you to the workspace ${workspace}`);
    expect(mail.text).toContain(
      `Grace Hopper (${owner.email}) invited you to join the workspace "${workspace}"`,
    );
    for (const part of ['IT support', 'it@example.com']) {
      expect(mail.subject).not.toContain(part);
      expect(mail.text).not.toContain(part);
    }
    const listed = await collabAs(stack.collab.app, owner).get('/api/invitations').query({ workspace });
    expect(listed.body.items.map((i: Invitation) => i.invitedBy)).toEqual(['Grace Hopper']);

    // The document still accepts the field (the interface document lists it) but marks it ignored.
    const doc = (await request(stack.collab.app).get('/openapi.json')).body;
    expect(doc.components.schemas.SendInvitationRequest.properties.invitedBy).toMatchObject({
      deprecated: true,
      description: expect.stringMatching(/Ignored/),
    });
  });

  test('an expired code is refused with 410, and a resend replaces the older code', async () => {
    const owner = await newUser(stack);
    const invitee = await newUser(stack);
    const workspace = await workspaceOf(owner);
    const first = await invite(owner, { email: invitee.email, workspace, role: 'viewer' });
    const second = await invite(owner, { email: invitee.email, workspace, role: 'viewer' });
    expect((await validate(first.invitationCode)).body).toMatchObject({ valid: false, reason: 'revoked' });
    const replaced = await collabAs(stack.collab.app, invitee)
      .post('/api/invitations/accept')
      .send({ invitationCode: first.invitationCode });
    expect(replaced.status).toBe(410);
    expect(replaced.body).toMatchObject({ code: 'gone', reason: 'revoked' });

    // Time travel: the invitation was sent eight days ago.
    await stack.collab.deps.dataSource.query(
      `UPDATE invitations SET created_at = now() - interval '8 days', expires_at = now() - interval '1 day'
        WHERE id = $1`,
      [second.id],
    );
    expect((await validate(second.invitationCode)).body).toMatchObject({
      valid: false,
      reason: 'expired',
      workspace,
    });
    const expired = await collabAs(stack.collab.app, invitee)
      .post('/api/invitations/accept')
      .send({ invitationCode: second.invitationCode });
    expect(expired.status).toBe(410);
    expect(expired.body).toMatchObject({ code: 'gone', reason: 'expired' });
    const listed = await collabAs(stack.collab.app, invitee).get('/api/invitations');
    // The aged row is now the older one.
    expect(listed.body.items.map((i: Invitation) => i.status)).toEqual(['revoked', 'expired']);
    // Still not a member.
    await collabAs(stack.collab.app, invitee).get(`/v1/workspaces/${workspace}`).expect(404);
  });

  test('accepting needs the invited address (case-insensitive) and a sign-in; unknown codes', async () => {
    const owner = await newUser(stack);
    const invitee = await newUser(stack);
    const stranger = await newUser(stack);
    const workspace = await workspaceOf(owner);
    const { invitationCode } = await invite(owner, { email: invitee.email.toUpperCase(), workspace });

    const wrong = await collabAs(stack.collab.app, stranger)
      .post('/api/invitations/accept')
      .send({ invitationCode });
    expect(wrong.status).toBe(403);
    expect(wrong.body).toMatchObject({ code: 'forbidden' });
    await request(stack.collab.app).post('/api/invitations/accept').send({ invitationCode }).expect(401);

    await collabAs(stack.collab.app, invitee)
      .post('/api/invitations/accept')
      .send({ invitationCode })
      .expect(200);

    const unknown = await validate('no-such-code');
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ valid: false, reason: 'not_found' });
    const missing = await collabAs(stack.collab.app, invitee)
      .post('/api/invitations/accept')
      .send({ invitationCode: 'no-such-code' });
    expect(missing.status).toBe(404);
    const invalid = await request(stack.collab.app).post('/api/invitations/validate').send({});
    expect(invalid.status).toBe(400);
    expect(invalid.body.code).toBe('validation_failed');
  });

  test('sending needs manager+, and only an owner invites an owner', async () => {
    const owner = await newUser(stack);
    const workspace = await workspaceOf(owner);
    const manager = await join(owner, workspace, 'manager');
    const engineer = await join(owner, workspace, 'engineer');
    const outsider = await newUser(stack);

    const send = (who: TestUser, role?: string) =>
      collabAs(stack.collab.app, who)
        .post('/api/invitations/send')
        .send({ email: uniqueEmail('guest'), workspace, ...(role ? { role } : {}) });
    expect((await send(engineer)).status).toBe(403);
    expect((await send(outsider)).status).toBe(404);
    const managerOwner = await send(manager, 'owner');
    expect(managerOwner.status).toBe(403);
    expect(managerOwner.body.detail).toMatch(/owner/);
    const managerManager = await send(manager, 'manager');
    expect(managerManager.status).toBe(201);
    expect(managerManager.body.invitedBy).toBeTruthy();
    expect((await send(owner, 'owner')).body).toMatchObject({ role: 'owner', status: 'pending' });
    const bad = await send(owner, 'admin');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'role' })]);
  });

  test('the 6th send in a minute from one address is 429 with Retry-After, whatever the request', async () => {
    const owner = await newUser(stack);
    const outsider = await newUser(stack);
    const workspace = await workspaceOf(owner);
    for (let i = 0; i < 5; i += 1) {
      await collabAs(stack.collab.app, owner)
        .post('/api/invitations/send')
        .send({ email: uniqueEmail('guest'), workspace })
        .expect(201);
    }
    const sixth = await collabAs(stack.collab.app, owner)
      .post('/api/invitations/send')
      .send({ email: uniqueEmail('guest'), workspace });
    expect(sixth.status).toBe(429);
    expect(sixth.body).toMatchObject({ code: 'rate_limited', path: '/api/invitations/send' });
    expect(Number(sixth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(sixth.headers['ratelimit-policy']).toMatch(/"invitations"; q=5; w=60/);

    // Counted per address before the role check: refused attempts count too.
    const ip = owner.ip.replace(/\d+$/, (n) => String((Number(n) + 1) % 256));
    const other = { ...outsider, ip };
    for (let i = 0; i < 5; i += 1) {
      await collabAs(stack.collab.app, other)
        .post('/api/invitations/send')
        .send({ email: uniqueEmail('guest'), workspace })
        .expect(404);
    }
    const limited = await collabAs(stack.collab.app, other)
      .post('/api/invitations/send')
      .send({ email: uniqueEmail('guest'), workspace });
    expect(limited.status).toBe(429);
  });

  test('listing: own invitations, status filter, workspace scope for managers, limit', async () => {
    const owner = await newUser(stack);
    const workspace = await workspaceOf(owner);
    const engineer = await join(owner, workspace, 'engineer');
    const pendingEmail = uniqueEmail('pending');
    await invite(owner, { email: pendingEmail, workspace, role: 'viewer' });
    const outsider = await newUser(stack);

    const list = async (who: TestUser, query: Record<string, string | number> = {}) => {
      const res = await collabAs(stack.collab.app, who).get('/api/invitations').query(query);
      expect(res.status).toBe(200);
      return (res.body.items as Invitation[]).map((i) => `${i.email}:${i.status}`);
    };
    // The sender sees what they sent, newest first.
    expect(await list(owner)).toEqual([`${pendingEmail}:pending`, `${engineer.email}:accepted`]);
    expect(await list(owner, { status: 'pending' })).toEqual([`${pendingEmail}:pending`]);
    expect(await list(owner, { status: 'accepted' })).toEqual([`${engineer.email}:accepted`]);
    expect(await list(owner, { limit: 1 })).toEqual([`${pendingEmail}:pending`]);

    // The invitee sees the one sent to them; within the workspace an engineer still sees only theirs.
    expect(await list(engineer)).toEqual([`${engineer.email}:accepted`]);
    expect(await list(engineer, { workspace })).toEqual([`${engineer.email}:accepted`]);
    expect(await list(engineer, { workspace, status: 'pending' })).toEqual([]);

    // A manager of the workspace sees all of its invitations, including ones others sent.
    const manager = await join(owner, workspace, 'manager');
    expect(await list(manager, { workspace })).toEqual([
      `${manager.email}:accepted`,
      `${pendingEmail}:pending`,
      `${engineer.email}:accepted`,
    ]);
    expect(await list(manager)).toEqual([`${manager.email}:accepted`]);
    expect(await list(outsider, { workspace })).toEqual([]);

    const bad = await collabAs(stack.collab.app, owner).get('/api/invitations').query({ status: 'nope' });
    expect(bad.status).toBe(400);
    await request(stack.collab.app).get('/api/invitations').expect(401);
  });

  test('every invitation route is in the OpenAPI document with its schemas', async () => {
    const doc = (await request(stack.collab.app).get('/openapi.json')).body;
    const send = doc.paths['/api/invitations/send'].post;
    expect(send['x-required-role']).toBe('manager');
    expect(Object.keys(send.responses)).toEqual(expect.arrayContaining(['201', '403', '409', '429']));
    expect(doc.paths['/api/invitations'].get.responses['200']).toBeDefined();
    const validateOp = doc.paths['/api/invitations/validate'].post;
    expect(validateOp.security ?? []).toEqual([]);
    expect(validateOp.description).toMatch(/not_found/);
    const accept = doc.paths['/api/invitations/accept'].post;
    expect(Object.keys(accept.responses)).toEqual(
      expect.arrayContaining(['200', '403', '404', '409', '410']),
    );
  });
});
