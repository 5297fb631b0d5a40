import type { MigrationInterface, QueryRunner } from 'typeorm';

/** When the due-soon notice of a review or task went out (once per due date; a new due date clears it). */
export class DueSoonNotices1764300000100 implements MigrationInterface {
  name = 'DueSoonNotices1764300000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['design_reviews', 'tasks']) {
      await queryRunner.query(`ALTER TABLE ${table} ADD COLUMN due_notified_at timestamptz`);
      await queryRunner.query(
        `CREATE INDEX ${table}_due_idx ON ${table} (due_at) WHERE due_at IS NOT NULL AND due_notified_at IS NULL`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['design_reviews', 'tasks']) {
      await queryRunner.query(`DROP INDEX ${table}_due_idx`);
      await queryRunner.query(`ALTER TABLE ${table} DROP COLUMN due_notified_at`);
    }
  }
}
