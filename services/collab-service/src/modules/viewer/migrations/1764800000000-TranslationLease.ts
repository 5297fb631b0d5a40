import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A translation's lease (issue 34, finding 7): the worker running a job renews `lease_until` while it
 * runs, so a job whose process died is taken over once the lease has run out, well within the job's
 * time limit. Open jobs are found by state and lease, and by who asked for them (the per-user cap).
 */
export class TranslationLease1764800000000 implements MigrationInterface {
  name = 'TranslationLease1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE model_translations ADD COLUMN lease_until timestamptz');
    await queryRunner.query(
      `CREATE INDEX model_translations_open_idx ON model_translations (status, lease_until)
        WHERE status IN ('pending', 'inprogress')`,
    );
    await queryRunner.query(
      `CREATE INDEX model_translations_requester_idx ON model_translations (requested_by)
        WHERE status IN ('pending', 'inprogress')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX model_translations_requester_idx');
    await queryRunner.query('DROP INDEX model_translations_open_idx');
    await queryRunner.query('ALTER TABLE model_translations DROP COLUMN lease_until');
  }
}
