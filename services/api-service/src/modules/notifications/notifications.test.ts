import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DevMailboxList, type NotificationRequestedData, RoutingKeys } from '@hwp/contracts';
import { buildEnvelope } from '@hwp/platform';
import {
  expectEventually,
  type ReceivedMail,
  startFakeSmtp,
  startFakeTwilio,
  startTestService,
  type TestService,
} from '@hwp/platform/test-kit';
import request from 'supertest';
import { type ApiConfig, loadApiConfig } from '../../config';
import { apiService } from '../../service';
import { DeliveryError } from './delivery-error';
import { createNotificationsModule } from './notifications.service';
import { createTwilioSmsSender } from './sms-twilio';

const hex = (bytes = 4) => randomBytes(bytes).toString('hex');

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

// --- Helpers on a running api-service. ---

function helpers(service: TestService<ApiConfig>) {
  const notifications = createNotificationsModule(service.deps);
  return {
    emit: (data: NotificationRequestedData) =>
      service.deps.bus.transaction((manager) => notifications.request(manager, data, 'test')),
    mailbox: async (to: string, extra: Record<string, number> = {}): Promise<DevMailboxList> =>
      (
        await request(service.app)
          .get('/dev/mailbox')
          .query({ to, ...extra })
          .expect(200)
      ).body,
    log: (msg: string, match: Record<string, unknown>) =>
      service.logs.find((l) => l.msg === msg && Object.entries(match).every(([k, v]) => l[k] === v)),
    mailboxRows: async (): Promise<number> =>
      (await service.deps.dataSource.query('SELECT count(*)::int AS n FROM dev_mailbox'))[0].n,
  };
}

const email = (to: string, template = `t-${hex()}`): NotificationRequestedData => ({
  channel: 'email',
  to,
  template,
  subject: `Your code ${template}`,
  text: `Your code is 123456 (${template})`,
  vars: { code: '123456' },
});

describe('notifier without transports (development)', () => {
  let service: TestService<ApiConfig>;
  let h: ReturnType<typeof helpers>;

  beforeAll(async () => {
    service = await startTestService(apiService, loadApiConfig, {
      LOG_LEVEL: 'debug',
      BUS_MAX_ATTEMPTS: '3',
      BUS_RETRY_DELAY_MS: '50',
    });
    h = helpers(service);
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('keeps an email in the dev mailbox, found by its address in any case', async () => {
    const to = `Ada.Lovelace-${hex()}@Example.COM`;
    const data = email(to);
    await h.emit(data);
    const list = await expectEventually(async () => {
      const found = await h.mailbox(to.toLowerCase());
      expect(found.total).toBe(1);
      return found;
    });
    expect(list).toEqual({
      items: [
        {
          id: expect.any(String),
          event_id: expect.any(String),
          channel: 'email',
          to: to.toLowerCase(),
          template: data.template,
          subject: data.subject,
          text: data.text,
          created_at: expect.any(String),
        },
      ],
      total: 1,
      page: 1,
      pageSize: 50,
    });
    expect((await h.mailbox(to.toUpperCase())).items[0].id).toBe(list.items[0].id);
  });

  it('keeps an SMS under its E.164 number, also when the + arrives unencoded', async () => {
    const to = `+1415${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
    await h.emit({ channel: 'sms', to, template: 'phone-otp', text: 'Your code is 654321' });
    await expectEventually(async () => expect((await h.mailbox(to)).total).toBe(1));
    const raw = await request(service.app).get(`/dev/mailbox?to=${to}`).expect(200);
    expect(raw.body.items).toEqual([
      expect.objectContaining({ channel: 'sms', to, subject: null, text: 'Your code is 654321' }),
    ]);
  });

  it('lists newest first, a page at a time', async () => {
    const to = `pages-${hex()}@example.com`;
    const templates = ['first', 'second', 'third'];
    for (const [i, template] of templates.entries()) {
      await h.emit(email(to, template));
      await expectEventually(async () => expect((await h.mailbox(to)).total).toBe(i + 1));
    }
    const first = await h.mailbox(to, { pageSize: 2 });
    const second = await h.mailbox(to, { pageSize: 2, page: 2 });
    expect(first).toMatchObject({ total: 3, page: 1, pageSize: 2 });
    expect([...first.items, ...second.items].map((m) => m.template)).toEqual(['third', 'second', 'first']);
  });

  it('delivers an event that arrives twice only once', async () => {
    const to = `twice-${hex()}@example.com`;
    const envelope = buildEnvelope({
      type: RoutingKeys.notificationRequested,
      actor: 'test',
      data: email(to),
    });
    await service.deps.bus.transport.publish(envelope);
    await service.deps.bus.transport.publish(envelope);
    await expectEventually(() =>
      expect(h.log('duplicate event skipped', { eventId: envelope.id })).toBeDefined(),
    );
    const list = await h.mailbox(to);
    expect(list.total).toBe(1);
    expect(list.items[0].event_id).toBe(envelope.id);
  });

  it('dead-letters a malformed request and keeps nothing', async () => {
    const before = await h.mailboxRows();
    const envelope = await service.deps.bus.transaction((manager) =>
      service.deps.bus.outbox.add(manager, {
        type: RoutingKeys.notificationRequested,
        actor: 'test',
        data: { channel: 'fax', to: 'nobody', text: '' },
      }),
    );
    const failure = await expectEventually(() => {
      const line = h.log('event handler failed for the last time; dead-lettered', { eventId: envelope.id });
      expect(line).toBeDefined();
      return line;
    });
    expect(String(failure?.err)).toContain('malformed notification.requested.v1');
    expect(await h.mailboxRows()).toBe(before);
  });

  it('refuses a malformed request in the producer transaction', async () => {
    const bad = { channel: 'email', to: 'a@b.example, c@d.example', template: 'x', text: 'y' } as const;
    await expect(h.emit(bad)).rejects.toThrow(/to must be one email address/);
  });

  it('answers 400 without ?to=', async () => {
    const res = await request(service.app).get('/dev/mailbox').expect(400);
    expect(res.body).toMatchObject({ code: 'validation_failed', path: '/dev/mailbox' });
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain('to');
  });

  it('documents /dev/mailbox in the OpenAPI document', async () => {
    const res = await request(service.app).get('/openapi.json').expect(200);
    expect(res.body.paths['/dev/mailbox']?.get).toBeDefined();
  });
});

describe('notifier with SMTP_URL', () => {
  let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
  let service: TestService<ApiConfig>;
  let h: ReturnType<typeof helpers>;

  beforeAll(async () => {
    smtp = await startFakeSmtp('mailer', 's3cret');
    service = await startTestService(apiService, loadApiConfig, {
      SMTP_URL: smtp.url,
      SMTP_FROM: 'Hardware Platform <no-reply@hwp.test>',
    });
    h = helpers(service);
  });
  afterAll(async () => {
    await service?.stop();
    await smtp?.stop();
  });

  it('sends the email to the SMTP server and keeps nothing in the dev mailbox', async () => {
    const to = `grace-${hex()}@example.com`;
    const data = email(to);
    await h.emit(data);
    const mail = await expectEventually(() => {
      const found = smtp.received.find((m) => m.rcptTo.includes(to));
      expect(found).toBeDefined();
      return found as ReceivedMail;
    });
    expect(mail.mailFrom).toBe('no-reply@hwp.test');
    expect(mail.headers.from).toBe('Hardware Platform <no-reply@hwp.test>');
    expect(mail.headers.to).toBe(to);
    expect(mail.headers.subject).toBe(data.subject);
    expect(mail.text).toBe(data.text);
    await expectEventually(() =>
      expect(h.log('notification sent by SMTP', { template: data.template })).toBeDefined(),
    );
    expect((await h.mailbox(to)).total).toBe(0);
  });

  it('still keeps an SMS in the dev mailbox when no SMS transport is configured', async () => {
    const to = '+4930123456789';
    await h.emit({ channel: 'sms', to, template: `sms-${hex()}`, text: 'hello' });
    await expectEventually(async () => expect((await h.mailbox(to)).total).toBeGreaterThan(0));
  });
});

describe('notifier with Twilio', () => {
  const accountSid = `AC${hex(16)}`;
  const authToken = hex(16);
  let twilio: Awaited<ReturnType<typeof startFakeTwilio>>;
  let service: TestService<ApiConfig>;
  let h: ReturnType<typeof helpers>;
  let phone = 4155550100;

  const nextPhone = () => `+1${phone++}`;

  beforeAll(async () => {
    twilio = await startFakeTwilio(accountSid, authToken);
    service = await startTestService(apiService, loadApiConfig, {
      TWILIO_ACCOUNT_SID: accountSid,
      TWILIO_AUTH_TOKEN: authToken,
      TWILIO_FROM: '+15005550006',
      TWILIO_API_URL: twilio.url,
      BUS_RETRY_DELAY_MS: '100',
    });
    h = helpers(service);
  });
  afterAll(async () => {
    await service?.stop();
    await twilio?.stop();
  });

  it('sends the SMS through the Messages endpoint', async () => {
    const to = nextPhone();
    await h.emit({ channel: 'sms', to, template: 'phone-otp', text: 'Your code is 111222' });
    await expectEventually(() => expect(twilio.callsTo(to)).toHaveLength(1));
    expect(twilio.callsTo(to)[0]).toEqual({
      form: { To: to, From: '+15005550006', Body: 'Your code is 111222' },
      status: 201,
    });
    expect((await h.mailbox(to)).total).toBe(0);
  });

  it('retries after a Twilio 500 and then delivers', async () => {
    const to = nextPhone();
    const template = `retry-${hex()}`;
    twilio.script(to, [500]);
    await h.emit({ channel: 'sms', to, template, text: 'Your code is 333444' });
    await expectEventually(() => expect(h.log('notification sent by SMS', { template })).toBeDefined());
    expect(twilio.callsTo(to).map((c) => c.status)).toEqual([500, 201]);
  });

  describe('the Twilio adapter', () => {
    const sender = (from = '+15005550006', apiUrl = twilio.url) =>
      // The fake Twilio answers at once; the limit only keeps a hung request from stalling the test.
      createTwilioSmsSender({ accountSid, authToken, from, apiUrl, timeoutMs: 15_000 });

    it('names a Messaging Service instead of a number when the sender is MG...', async () => {
      const to = nextPhone();
      const messagingService = `MG${hex(16)}`;
      const result = await sender(messagingService).send({ to, body: 'hi' });
      expect(result.providerId).toMatch(/^SM[0-9a-f]{32}$/);
      expect(twilio.callsTo(to)[0].form).toEqual({
        To: to,
        MessagingServiceSid: messagingService,
        Body: 'hi',
      });
    });

    it.each([
      [400, false],
      [401, false],
      [429, true],
      [503, true],
    ])('treats a %i answer as retryable=%s', async (status, retryable) => {
      const to = nextPhone();
      twilio.script(to, [status]);
      const failure = await sender()
        .send({ to, body: 'hi' })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(DeliveryError);
      expect(failure).toMatchObject({ retryable });
      expect((failure as Error).message).toContain(`Twilio answered ${status}`);
    });

    it('treats a wrong token as permanent', async () => {
      const failure = await createTwilioSmsSender({
        accountSid,
        authToken: 'wrong',
        from: '+1500',
        apiUrl: twilio.url,
      })
        .send({ to: nextPhone(), body: 'hi' })
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ retryable: false, message: expect.stringContaining('Authenticate') });
    });

    it('treats an unreachable API as transient', async () => {
      const closed = createServer();
      const port = await listen(closed);
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const failure = await sender('+15005550006', `http://127.0.0.1:${port}`)
        .send({ to: nextPhone(), body: 'hi' })
        .catch((error: unknown) => error);
      expect(failure).toMatchObject({ retryable: true });
    });
  });
});

describe('notifier in production', () => {
  let service: TestService<ApiConfig>;
  let h: ReturnType<typeof helpers>;

  beforeAll(async () => {
    const { privateKey } = generateKeyPairSync('ec', {
      namedCurve: 'P-256',
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    service = await startTestService(apiService, loadApiConfig, {
      NODE_ENV: 'production',
      JWT_PRIVATE_KEY: privateKey,
      AUTH_SECRET: randomBytes(32).toString('base64url'),
    });
    h = helpers(service);
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('has no /dev/mailbox, neither as a route nor in OpenAPI', async () => {
    await request(service.app).get('/dev/mailbox').query({ to: 'a@example.com' }).expect(404);
    const res = await request(service.app).get('/openapi.json').expect(200);
    expect(res.body.paths['/dev/mailbox']).toBeUndefined();
  });

  it('drops what it cannot deliver with an error in the log', async () => {
    const data = email(`prod-${hex()}@example.com`);
    await h.emit(data);
    const line = await expectEventually(() => {
      const found = h.log('no email transport is configured; notification dropped', {
        template: data.template,
      });
      expect(found).toBeDefined();
      return found;
    });
    expect(line?.level).toBe('error');
    expect(await h.mailboxRows()).toBe(0);
  });
});
