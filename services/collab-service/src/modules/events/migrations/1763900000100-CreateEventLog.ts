import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The event log behind `GET /v1/events` (DECISIONS.md section 7): a per-workspace counter that hands
 * out gap-free, ordered ids, the log rows kept for replay, and the presence of users across replicas.
 */
export class CreateEventLog1763900000100 implements MigrationInterface {
  name = 'CreateEventLog1763900000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    // One row per workspace; its row lock orders the events of a workspace (ids commit in id order).
    await queryRunner.query(`
      CREATE TABLE collab_event_counters (
        workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
        last_id bigint NOT NULL CHECK (last_id >= 0)
      )`);
    await queryRunner.query(`
      CREATE TABLE collab_events (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        id bigint NOT NULL CHECK (id > 0),
        type text NOT NULL CHECK (type <> ''),
        actor text NOT NULL,
        path text,
        recipient_id uuid REFERENCES collab_users (id) ON DELETE CASCADE,
        recipient text,
        data jsonb NOT NULL DEFAULT '{}'::jsonb,
        at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, id),
        CHECK ((recipient_id IS NULL) = (recipient IS NULL))
      )`);
    await queryRunner.query('CREATE INDEX collab_events_at_idx ON collab_events (at)');

    await queryRunner.query(`
      CREATE TABLE collab_presence (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES collab_users (id) ON DELETE CASCADE,
        replica_id text NOT NULL,
        connections integer NOT NULL CHECK (connections > 0),
        seen_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, user_id, replica_id)
      )`);
    await queryRunner.query('CREATE INDEX collab_presence_replica_idx ON collab_presence (replica_id)');
    await queryRunner.query('CREATE INDEX collab_presence_seen_idx ON collab_presence (seen_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE collab_presence');
    await queryRunner.query('DROP TABLE collab_events');
    await queryRunner.query('DROP TABLE collab_event_counters');
  }
}
