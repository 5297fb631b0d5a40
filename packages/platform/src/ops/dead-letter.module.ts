import { DeadLetterList, DeadLetterMessage, ErrorBodyDto, ListDeadLettersQuery } from '@hwp/contracts';
import { IsNull, Not } from 'typeorm';
import { AmqpTransport } from '../bus/amqp-transport';
import { DeadLetterEntity } from '../bus/dead-letter.entity';
import { MemoryTransport } from '../bus/memory-transport';
import type { PlatformDeps } from '../deps';
import { ConflictError, NotFoundError } from '../errors';
import type { ApiRouter } from '../http/api-router';
import { requireOpsToken } from './ops-auth';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function present(row: DeadLetterEntity): DeadLetterMessage {
  return {
    id: row.id,
    queue: row.queue,
    routingKey: row.routingKey,
    eventId: row.eventId,
    content: row.content,
    envelope: row.envelope as unknown as Record<string, unknown> | null,
    attempts: row.attempts,
    error: row.error,
    deadLetteredAt: row.deadLetteredAt.toISOString(),
    replayedAt: row.replayedAt ? row.replayedAt.toISOString() : null,
  };
}

/**
 * Dead letters of the in-process bus: listed from the service's `dead_letters` table and replayed to
 * the consumer queue they died in. On RabbitMQ they live in `<queue>.dlq` on the broker instead, and
 * both routes answer 409 naming those queues: the broker is the source of truth there, and reading a
 * queue through AMQP would take messages off it (or reorder them) just to list them.
 */
export function createDeadLetterModule(deps: PlatformDeps) {
  const { dataSource, bus } = deps;

  function assertStoredHere(queue?: string): MemoryTransport {
    const transport = bus.transport;
    if (transport instanceof MemoryTransport) return transport;
    if (transport instanceof AmqpTransport) {
      const queues = queue ? [transport.deadLetterQueueOf(queue)] : transport.deadLetterQueueNames();
      throw new ConflictError(
        `This service runs on RabbitMQ: its dead letters stay on the broker, in ${queues.join(', ') || 'the <queue>.dlq queue of each consumer'}; inspect or move them there (management UI, shovel)`,
        { deadLetterQueues: queues },
      );
    }
    throw new ConflictError(`The ${transport.kind} transport keeps no dead letters here`);
  }

  async function list(query: ListDeadLettersQuery): Promise<DeadLetterList> {
    assertStoredHere(query.queue);
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? 50;
    const where = {
      ...(query.queue ? { queue: query.queue } : {}),
      ...(query.replayed === 'false' ? { replayedAt: IsNull() } : {}),
      ...(query.replayed === 'true' ? { replayedAt: Not(IsNull()) } : {}),
    };
    const [rows, total] = await dataSource.getRepository(DeadLetterEntity).findAndCount({
      where,
      order: { deadLetteredAt: 'DESC', id: 'DESC' },
      skip: (page - 1) * pageSize,
      take: pageSize,
    });
    return { items: rows.map(present), total, page, pageSize };
  }

  async function replay(id: string): Promise<DeadLetterMessage> {
    const transport = assertStoredHere();
    if (!UUID.test(id)) throw new NotFoundError(`No dead letter ${id}`);
    return dataSource.transaction(async (manager) => {
      const repo = manager.getRepository(DeadLetterEntity);
      // The row lock makes two concurrent replays of one letter queue it once: the second sees replayed_at.
      const row = await repo.findOne({ where: { id }, lock: { mode: 'pessimistic_write' } });
      if (!row) throw new NotFoundError(`No dead letter ${id}`);
      if (row.replayedAt) {
        throw new ConflictError(`Dead letter ${id} was already replayed`, {
          replayedAt: row.replayedAt.toISOString(),
        });
      }
      row.replayedAt = new Date();
      await repo.update({ id }, { replayedAt: row.replayedAt });
      // Queued before the commit: if that fails the message may run again, which the inbox absorbs;
      // the other order could mark a letter replayed that never went back.
      transport.requeue(row.queue, row.routingKey, row.content);
      return present(row);
    });
  }

  function mount(api: ApiRouter, prefix: string): void {
    const guard = requireOpsToken(deps.config.OPS_TOKEN, deps.config.NODE_ENV === 'production');
    const security = ['opsToken'];
    const onRabbit = {
      description:
        'The service runs on RabbitMQ: dead letters are in `<queue>.dlq` on the broker (named in `detail`)',
      schema: ErrorBodyDto,
    };
    api.route({
      method: 'get',
      path: `${prefix}/dead-letters`,
      summary: 'Dead letters of this service (in-process bus), newest first',
      tags: ['operations'],
      security,
      before: [guard],
      query: ListDeadLettersQuery,
      responses: {
        200: { description: 'A page of dead letters', schema: DeadLetterList },
        409: onRabbit,
      },
      handler: ({ query }) => list(query),
    });
    api.route({
      method: 'post',
      path: `${prefix}/dead-letters/:id/replay`,
      summary: 'Hand a dead letter back to the consumer queue it died in, once',
      tags: ['operations'],
      security,
      before: [guard],
      responses: {
        202: { description: 'Queued for its consumer again; `replayedAt` is set', schema: DeadLetterMessage },
        404: { description: 'No such dead letter', schema: ErrorBodyDto },
        409: {
          description: 'Already replayed, or the service runs on RabbitMQ (see `detail`)',
          schema: ErrorBodyDto,
        },
      },
      status: 202,
      handler: ({ params }) => replay(params.id),
    });
  }

  return { list, replay, mount };
}
