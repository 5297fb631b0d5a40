import type { EventEnvelope } from '@hwp/contracts';
import type { EntityManager, MigrationInterface, QueryRunner } from 'typeorm';
import { baseConfigSpecs, loadConfig } from '../../src/config';
import type { BaseConfig, ServiceDefinition } from '../../src/deps';
import {
  createServiceApp,
  platformEntities,
  platformMigrations,
  registerPlatformConsumers,
} from '../../src/service-app';
import { startTestService, type TestService } from '../../src/test-kit/service';

/** Routing key the test consumer listens to. */
export const WIDGET_EVENT = 'widget.made.v1';
/** The test consumer's name: its queue is `<service>.widgets`. */
export const WIDGET_CONSUMER = 'widgets';

/** Side effects of the test consumer: one row per handled event, so duplicates show up as extra rows. */
class CreateWidgetEffects1763799999999 implements MigrationInterface {
  name = 'CreateWidgetEffects1763799999999';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE TABLE widget_effects (n bigserial PRIMARY KEY, event_id uuid NOT NULL, handled_at timestamptz NOT NULL DEFAULT now())',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE widget_effects');
  }
}

/** What the test consumer does with an event; the default records its effect. */
export type WidgetHandler = (event: EventEnvelope, manager: EntityManager) => Promise<void>;

export async function recordEffect(event: EventEnvelope, manager: EntityManager): Promise<void> {
  await manager.query('INSERT INTO widget_effects (event_id) VALUES ($1)', [event.id]);
}

/**
 * A minimal service on the real runtime (platform tables, ops routes under `/system`, /readyz) with
 * one consumer of WIDGET_EVENT whose behaviour the test sets through `handler.current`.
 */
export async function startWidgetService(
  env: Record<string, string | undefined>,
): Promise<{ service: TestService<BaseConfig>; handler: { current: WidgetHandler } }> {
  const handler: { current: WidgetHandler } = { current: recordEffect };
  const definition: ServiceDefinition<BaseConfig> = {
    name: 'widget-service',
    entities: platformEntities,
    migrations: [...platformMigrations, CreateWidgetEffects1763799999999],
    blobRoutePrefix: '/blobs',
    createApp: (deps) =>
      createServiceApp(deps, {
        openapi: { title: 'Widget service', description: 'Test service of the platform' },
        opsPrefix: '/system',
      }),
    async registerConsumers(deps) {
      await registerPlatformConsumers(deps);
      await deps.bus.subscribe({ consumer: WIDGET_CONSUMER, patterns: [WIDGET_EVENT] }, (event, manager) =>
        handler.current(event, manager),
      );
    },
  };
  const service = await startTestService(
    definition,
    (values) => loadConfig(values, baseConfigSpecs(0)) as unknown as BaseConfig,
    env,
  );
  return { service, handler };
}

/** Writes `count` widget events to the service's outbox in one transaction; returns their ids. */
export async function makeWidgets(service: TestService<BaseConfig>, count: number): Promise<string[]> {
  const { bus } = service.deps;
  return bus.transaction(async (manager) => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      ids.push((await bus.outbox.add(manager, { type: WIDGET_EVENT, actor: 'test', data: { i } })).id);
    }
    return ids;
  });
}

/** How many times each event's effect was recorded. */
export async function effectCounts(service: TestService<BaseConfig>): Promise<Record<string, number>> {
  const rows: { event_id: string; n: number }[] = await service.deps.dataSource.query(
    'SELECT event_id, count(*)::int AS n FROM widget_effects GROUP BY event_id',
  );
  return Object.fromEntries(rows.map((row) => [row.event_id, row.n]));
}
