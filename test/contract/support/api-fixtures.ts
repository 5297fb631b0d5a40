import { codeIn, latestMessage, signUp, uniqueEmail, uniquePhone } from '@hwp/platform/test-kit';
import request from 'supertest';
import { joinTenant } from '#api-test/factories';
import { solidPng } from '#api-test/fake-image-providers';
import { type CrossHostStack, collabAs } from '#collab-test/collab-test-kit';
import type { Fixtures } from '../service-interface.rows';
import { expectOk, type Users } from './fixtures-common';

/**
 * The API host's fixtures of the contract test, made through its HTTP API: a confirmed email user and
 * phone user, a one-time code already sent, a PNG with two revisions whose processing ended, a style,
 * and a team tenant with an admin member.
 */
export async function apiFixtures(stack: CrossHostStack, users: Users): Promise<Fixtures['api']> {
  const app = stack.api.app;
  const user = await signUp(app);
  users.user = user;
  const password = user.password;
  const phone = uniquePhone();
  expectOk(await request(app).post('/auth/signup').send({ phone, password }), 'phone signup', 200);
  const otpPhone = uniquePhone();
  expectOk(await request(app).post('/auth/phone-otp').send({ phone_number: otpPhone }), 'phone otp', 200);
  const otpCode = codeIn(await latestMessage(app, otpPhone, 'phone_otp'));

  const client = collabAs(app, user);
  const png = await solidPng('red');
  const first = expectOk(
    await client.post('/files/upload').field('folder_path', '/contract').attach('file', png, 'red.png'),
    'upload png',
  ).body;
  const second = expectOk(
    await client
      .post('/files/upload')
      .field('folder_path', '/contract')
      .field('replace_if_exists', 'true')
      .attach('file', await solidPng('blue'), 'red.png'),
    'second revision',
  ).body;
  // Processing (previews, thumbnails, metadata) of the current revision ends before the rows run.
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await client.get(`/files/${second.id}`);
    if (['ready', 'quarantined', 'failed'].includes(res.body.processing_status)) break;
    if (Date.now() > deadline) throw new Error(`processing did not end: ${JSON.stringify(res.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const style = expectOk(
    await client
      .post('/imgtool-create-style')
      .send({ name: 'Fixture style', reference_images: [second.path] }),
    'style',
  ).body;
  const token = expectOk(await client.get(`/files/${second.id}/access-token`), 'access token').body.token;
  const tenant = expectOk(await client.post('/tenant/create').send({ name: 'Contract org' }), 'tenant').body;
  const admin = await signUp(app);
  await joinTenant(app, user, tenant.id, admin, 'admin');
  users['tenant-admin'] = admin;
  return {
    email: user.email,
    password,
    phone,
    otpPhone,
    otpCode,
    newPhone: uniquePhone(),
    newEmail: uniqueEmail('magic'),
    fileId: second.id,
    firstRevisionId: first.current_revision_id,
    pngUrl: second.url,
    pngPath: second.path,
    downloadToken: token,
    styleId: style.id,
    tenantId: tenant.id,
  };
}
