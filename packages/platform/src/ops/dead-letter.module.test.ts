import request from 'supertest';
import {
  effectCounts,
  makeWidgets,
  recordEffect,
  startWidgetService,
  WIDGET_CONSUMER,
  type WidgetHandler,
} from '#test/widget-service';
import type { BaseConfig } from '../deps';
import { expectEventually } from '../test-kit/eventually';
import type { TestService } from '../test-kit/service';

const OPS_TOKEN = 'ops-token-for-dead-letter-tests';
const auth = { Authorization: `Bearer ${OPS_TOKEN}` };
const QUEUE = `widget-service.${WIDGET_CONSUMER}`;

const refuse: WidgetHandler = async () => {
  throw Object.assign(new Error('widget rejected'), { retryable: false });
};

describe('dead letters on the in-process bus', () => {
  let service: TestService<BaseConfig>;
  let handler: { current: WidgetHandler };

  beforeAll(async () => {
    ({ service, handler } = await startWidgetService({
      AMQP_URL: undefined,
      OPS_TOKEN,
      BUS_RETRY_DELAY_MS: '20',
    }));
  });

  afterAll(async () => {
    await service?.stop();
  });

  async function deadLettered(count: number): Promise<string[]> {
    handler.current = refuse;
    const ids = await makeWidgets(service, count);
    await expectEventually(async () => {
      const rows = await service.deps.dataSource.query(
        'SELECT event_id FROM dead_letters WHERE event_id = ANY($1)',
        [ids],
      );
      expect(rows).toHaveLength(count);
    });
    return ids;
  }

  it('stores a dead letter in the service database, lists it and replays it to its consumer once', async () => {
    const [eventId] = await deadLettered(1);

    const list = await request(service.app)
      .get('/system/dead-letters')
      .query({ queue: QUEUE, replayed: 'false' })
      .set(auth)
      .expect(200);
    const letter = list.body.items.find((item: { eventId: string }) => item.eventId === eventId);
    expect(letter).toEqual({
      id: expect.any(String),
      queue: QUEUE,
      routingKey: 'widget.made.v1',
      eventId,
      content: expect.stringContaining(eventId),
      envelope: expect.objectContaining({ id: eventId, type: 'widget.made.v1' }),
      attempts: 1,
      error: 'widget rejected',
      deadLetteredAt: expect.any(String),
      replayedAt: null,
    });
    expect(list.body).toMatchObject({ page: 1, pageSize: 50, total: expect.any(Number) });

    handler.current = recordEffect;
    const replayed = await request(service.app)
      .post(`/system/dead-letters/${letter.id}/replay`)
      .set(auth)
      .expect(202);
    expect(replayed.body).toEqual({ ...letter, replayedAt: expect.any(String) });
    await expectEventually(async () => expect((await effectCounts(service))[eventId]).toBe(1));

    const again = await request(service.app)
      .post(`/system/dead-letters/${letter.id}/replay`)
      .set(auth)
      .expect(409);
    expect(again.body).toMatchObject({ code: 'conflict', replayedAt: replayed.body.replayedAt });

    const open = await request(service.app)
      .get('/system/dead-letters')
      .query({ replayed: 'false' })
      .set(auth)
      .expect(200);
    expect(open.body.items.map((item: { id: string }) => item.id)).not.toContain(letter.id);
    const done = await request(service.app)
      .get('/system/dead-letters')
      .query({ replayed: 'true' })
      .set(auth)
      .expect(200);
    expect(done.body.items.map((item: { id: string }) => item.id)).toContain(letter.id);
    // Replayed once, handled once.
    expect((await effectCounts(service))[eventId]).toBe(1);
  });

  it('lists newest first, pages, and filters by queue', async () => {
    const ids = await deadLettered(3);
    // The first test replayed its letter, so these three are the only ones not replayed.
    const pageOf = (page: number) =>
      request(service.app)
        .get('/system/dead-letters')
        .query({ queue: QUEUE, replayed: 'false', page, pageSize: 2 })
        .set(auth)
        .expect(200);
    const first = await pageOf(1);
    const second = await pageOf(2);
    expect(first.body).toMatchObject({ total: 3, page: 1, pageSize: 2 });
    expect(second.body).toMatchObject({ total: 3, page: 2, pageSize: 2 });
    const items = [...first.body.items, ...second.body.items] as {
      eventId: string;
      deadLetteredAt: string;
    }[];
    expect(items.map((item) => item.eventId).sort()).toEqual([...ids].sort());
    const times = items.map((item) => item.deadLetteredAt);
    expect(times).toEqual([...times].sort().reverse());
    const other = await request(service.app)
      .get('/system/dead-letters')
      .query({ queue: 'nobody.here' })
      .set(auth)
      .expect(200);
    expect(other.body).toEqual({ items: [], total: 0, page: 1, pageSize: 50 });
  });

  it('answers 404 for an unknown dead letter and 400 for a bad filter', async () => {
    await request(service.app)
      .post('/system/dead-letters/0190a6a4-9a1d-7c3e-8f00-000000000000/replay')
      .set(auth)
      .expect(404);
    await request(service.app).post('/system/dead-letters/not-an-id/replay').set(auth).expect(404);
    await request(service.app).get('/system/dead-letters').query({ replayed: 'maybe' }).set(auth).expect(400);
  });

  it('needs the operator token', async () => {
    await request(service.app).get('/system/dead-letters').expect(401);
    await request(service.app).get('/system/dead-letters').set('Authorization', 'Bearer wrong').expect(401);
    await request(service.app)
      .post('/system/dead-letters/0190a6a4-9a1d-7c3e-8f00-000000000000/replay')
      .expect(401);
  });

  it('documents both routes with their schemas in the OpenAPI document', async () => {
    const doc = await request(service.app).get('/openapi.json').expect(200);
    const list = doc.body.paths['/system/dead-letters'].get;
    expect(list.security).toEqual([{ opsToken: [] }]);
    expect(list.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/DeadLetterList',
    });
    const replay = doc.body.paths['/system/dead-letters/{id}/replay'].post;
    expect(Object.keys(replay.responses)).toEqual(expect.arrayContaining(['202', '401', '404', '409']));
    expect(doc.body.components.schemas.DeadLetterMessage.properties).toHaveProperty('replayedAt');
  });
});

describe('dead-letter routes without OPS_TOKEN in production', () => {
  let service: TestService<BaseConfig>;

  beforeAll(async () => {
    ({ service } = await startWidgetService({ AMQP_URL: undefined, NODE_ENV: 'production' }));
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('are absent', async () => {
    await request(service.app).get('/system/dead-letters').expect(404);
    await request(service.app)
      .post('/system/dead-letters/0190a6a4-9a1d-7c3e-8f00-000000000000/replay')
      .expect(404);
  });
});

describe('dead-letter routes on RabbitMQ', () => {
  let service: TestService<BaseConfig>;

  beforeAll(async () => {
    ({ service } = await startWidgetService({ OPS_TOKEN }));
  });

  afterAll(async () => {
    await service?.stop();
  });

  it('answer 409 naming the dead-letter queue on the broker', async () => {
    const namespace = service.deps.config.AMQP_NAMESPACE;
    const list = await request(service.app)
      .get('/system/dead-letters')
      .query({ queue: QUEUE })
      .set(auth)
      .expect(409);
    expect(list.body.detail).toContain(`${namespace}${QUEUE}.dlq`);
    expect(list.body.deadLetterQueues).toEqual([`${namespace}${QUEUE}.dlq`]);
    const all = await request(service.app).get('/system/dead-letters').set(auth).expect(409);
    expect(all.body.deadLetterQueues).toEqual(expect.arrayContaining([`${namespace}${QUEUE}.dlq`]));
    await request(service.app)
      .post('/system/dead-letters/0190a6a4-9a1d-7c3e-8f00-000000000000/replay')
      .set(auth)
      .expect(409);
  });
});
