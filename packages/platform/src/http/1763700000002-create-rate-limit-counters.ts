import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fixed-window counters of the Postgres rate-limit store, shared by every replica.
 * UNLOGGED: the rows are disposable (a crash that empties the table only restarts the windows)
 * and every limited request writes one, so they are kept out of the WAL.
 */
export class CreateRateLimitCounters1763700000002 implements MigrationInterface {
  name = 'CreateRateLimitCounters1763700000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE UNLOGGED TABLE rate_limit_counters (
        key text PRIMARY KEY,
        hits integer NOT NULL CHECK (hits >= 0),
        reset_at timestamptz NOT NULL
      )`);
    // The purge deletes expired windows by time.
    await queryRunner.query(
      'CREATE INDEX rate_limit_counters_reset_at_idx ON rate_limit_counters (reset_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE rate_limit_counters');
  }
}
