import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * When each kind of thing last changed in a workspace, for validators that cost one indexed read
 * (BOM exports' ETag and Last-Modified): `changed_at` on the counter is the workspace's change
 * clock (the time of its latest change event, never moving backwards); `collab_event_marks` holds, per
 * event type, the id and clock of the latest change event of that type.
 */
export class EventChangeMarks1764900000000 implements MigrationInterface {
  name = 'EventChangeMarks1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE collab_event_counters ADD COLUMN changed_at timestamptz');
    await queryRunner.query(`
      CREATE TABLE collab_event_marks (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        type text NOT NULL CHECK (type <> ''),
        last_id bigint NOT NULL CHECK (last_id > 0),
        changed_at timestamptz NOT NULL,
        PRIMARY KEY (workspace_id, type)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE collab_event_marks');
    await queryRunner.query('ALTER TABLE collab_event_counters DROP COLUMN changed_at');
  }
}
