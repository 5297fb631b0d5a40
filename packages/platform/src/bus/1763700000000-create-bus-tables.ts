import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Outbox and inbox tables of the event bus; every service that publishes or consumes runs it. */
export class CreateBusTables1763700000000 implements MigrationInterface {
  name = 'CreateBusTables1763700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE outbox (
        id uuid PRIMARY KEY,
        type text NOT NULL,
        envelope jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz NULL,
        attempts int NOT NULL DEFAULT 0,
        last_error text NULL
      )
    `);
    // The relay only ever scans unpublished rows, so the index stays small however long the table grows.
    await queryRunner.query(
      'CREATE INDEX outbox_unpublished_idx ON outbox (created_at) WHERE published_at IS NULL',
    );
    await queryRunner.query(`
      CREATE TABLE inbox (
        consumer text NOT NULL,
        event_id uuid NOT NULL,
        processed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (consumer, event_id)
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS inbox');
    await queryRunner.query('DROP TABLE IF EXISTS outbox');
  }
}
