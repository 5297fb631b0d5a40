import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the processing sweep needs to find revisions whose processing stalled (its event dead-lettered,
 * its process killed): when the current attempt began, how often it was requeued, and why it failed.
 */
export class AddProcessingDeadline1764800000100 implements MigrationInterface {
  name = 'AddProcessingDeadline1764800000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE file_revisions
        ADD COLUMN processing_since timestamptz NOT NULL DEFAULT now(),
        ADD COLUMN processing_requeues integer NOT NULL DEFAULT 0,
        ADD COLUMN processing_error text`);
    await queryRunner.query(`UPDATE file_revisions SET processing_since = created_at`);
    await queryRunner.query(
      `CREATE INDEX file_revisions_unfinished_idx ON file_revisions (processing_since)
         WHERE processing_status IN ('pending', 'processing')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX file_revisions_unfinished_idx');
    await queryRunner.query(
      'ALTER TABLE file_revisions DROP COLUMN processing_since, DROP COLUMN processing_requeues, DROP COLUMN processing_error',
    );
  }
}
