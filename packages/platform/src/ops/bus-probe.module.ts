import {
  BusProbe,
  BusProbeList,
  CreateBusProbeRequest,
  ErrorBodyDto,
  ListBusProbesQuery,
  RoutingKeys,
  type SystemProbeData,
} from '@hwp/contracts';
import type { EntityManager } from 'typeorm';
import type { PlatformDeps } from '../deps';
import { NotFoundError } from '../errors';
import type { ApiRouter } from '../http/api-router';
import { newId } from '../ids';
import { BusProbeEntity } from './bus-probe.entity';
import { requireOpsToken } from './ops-auth';

function present(row: BusProbeEntity): BusProbe {
  return {
    id: row.id,
    direction: row.direction,
    origin: row.origin,
    note: row.note,
    sentAt: row.sentAt.toISOString(),
    receivedAt: row.receivedAt ? row.receivedAt.toISOString() : null,
    storage: row.storageKey && row.storageSha256 ? { key: row.storageKey, sha256: row.storageSha256 } : null,
  };
}

/**
 * Bus probes: an operator sends one from a service; it travels through that service's outbox and
 * the broker to every other service, which records it. Reading it back on the other side proves
 * the whole message path (outbox, relay, exchange, queue, inbox) works in this deployment.
 */
export function createBusProbeModule(deps: PlatformDeps) {
  const { dataSource, bus, blobs, service } = deps;

  async function send(note: string): Promise<BusProbe> {
    const id = newId();
    const sentAt = new Date();
    // The blob goes first: a probe row never points at an object that was not written.
    const stored = await blobs.put(
      `ops/${service}/probes/${id}.json`,
      Buffer.from(JSON.stringify({ id, origin: service, note, sentAt: sentAt.toISOString() })),
      { contentType: 'application/json' },
    );
    const row = await bus.transaction(async (manager) => {
      const probe = manager.create(BusProbeEntity, {
        id,
        direction: 'sent',
        origin: service,
        note,
        sentAt,
        receivedAt: null,
        storageKey: stored.key,
        storageSha256: stored.sha256,
      });
      await manager.insert(BusProbeEntity, probe);
      const data: SystemProbeData = {
        probeId: probe.id,
        origin: service,
        note,
        sentAt: probe.sentAt.toISOString(),
      };
      await bus.outbox.add(manager, { type: RoutingKeys.systemProbe, actor: 'system', data });
      return probe;
    });
    return present(row);
  }

  async function receive(data: SystemProbeData, manager: EntityManager): Promise<void> {
    if (data.origin === service) return;
    await manager
      .createQueryBuilder()
      .insert()
      .into(BusProbeEntity)
      .values({
        id: data.probeId,
        direction: 'received',
        origin: data.origin,
        note: data.note,
        sentAt: new Date(data.sentAt),
        receivedAt: new Date(),
        storageKey: null,
        storageSha256: null,
      })
      .orIgnore()
      .execute();
  }

  function mount(api: ApiRouter, prefix: string): void {
    const guard = requireOpsToken(deps.config.OPS_TOKEN, deps.config.NODE_ENV === 'production');
    const security = ['opsToken'];
    api.route({
      method: 'post',
      path: `${prefix}/probes`,
      summary: 'Send a bus probe to the other services through the outbox',
      tags: ['operations'],
      security,
      before: [guard],
      body: CreateBusProbeRequest,
      responses: { 202: { description: 'Probe committed to the outbox', schema: BusProbe } },
      status: 202,
      handler: ({ body }) => send(body.note ?? ''),
    });
    api.route({
      method: 'get',
      path: `${prefix}/probes`,
      summary: 'Probes sent from or received by this service, newest first',
      tags: ['operations'],
      security,
      before: [guard],
      query: ListBusProbesQuery,
      responses: { 200: { description: 'A page of probes', schema: BusProbeList } },
      handler: async ({ query }) => {
        const page = query.page ?? 1;
        const pageSize = query.pageSize ?? 50;
        const [rows, total] = await dataSource.getRepository(BusProbeEntity).findAndCount({
          order: { sentAt: 'DESC', id: 'DESC' },
          skip: (page - 1) * pageSize,
          take: pageSize,
        });
        return { items: rows.map(present), total, page, pageSize };
      },
    });
    api.route({
      method: 'get',
      path: `${prefix}/probes/:id`,
      summary: 'One probe as this service recorded it',
      tags: ['operations'],
      security,
      before: [guard],
      responses: {
        200: { description: 'The probe', schema: BusProbe },
        404: { description: 'This service has no such probe (yet)', schema: ErrorBodyDto },
      },
      handler: async ({ params }) => {
        const { id } = params;
        const rows = /^[0-9a-f-]{36}$/i.test(id)
          ? await dataSource
              .getRepository(BusProbeEntity)
              .find({ where: { id }, order: { direction: 'ASC' } })
          : [];
        if (rows.length === 0) throw new NotFoundError(`No probe ${id} here`);
        return present(rows[0]);
      },
    });
  }

  async function registerConsumer(): Promise<void> {
    await bus.subscribeTo({ consumer: 'bus-probe', keys: [RoutingKeys.systemProbe] }, (event, manager) =>
      receive(event.data, manager),
    );
  }

  return { send, mount, registerConsumer };
}
