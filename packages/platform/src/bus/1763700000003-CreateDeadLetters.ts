import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Dead letters of the in-process bus, one table per service database: what `<queue>.dlq` is on
 * RabbitMQ. Operators list them and replay them to their consumer through the /system routes.
 */
export class CreateDeadLetters1763700000003 implements MigrationInterface {
  name = 'CreateDeadLetters1763700000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE dead_letters (
        id uuid PRIMARY KEY,
        queue text NOT NULL,
        routing_key text NOT NULL,
        content text NOT NULL,
        envelope jsonb NULL,
        event_id uuid NULL,
        attempts int NOT NULL CHECK (attempts >= 1),
        error text NOT NULL,
        dead_lettered_at timestamptz NOT NULL,
        replayed_at timestamptz NULL
      )`);
    // The list is newest first, optionally for one queue; the queue comes first so that filter is a range scan.
    await queryRunner.query(
      'CREATE INDEX dead_letters_queue_listing_idx ON dead_letters (queue, dead_lettered_at DESC, id DESC)',
    );
    await queryRunner.query(
      'CREATE INDEX dead_letters_listing_idx ON dead_letters (dead_lettered_at DESC, id DESC)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS dead_letters');
  }
}
