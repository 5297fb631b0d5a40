import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The provider's job id of a long operation, so polling resumes after a restart. */
export class AddProviderJobs1764600000200 implements MigrationInterface {
  name = 'AddProviderJobs1764600000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE image_operations ADD COLUMN provider_job text');
    await queryRunner.query(
      "CREATE INDEX image_operations_running_idx ON image_operations (created_at) WHERE status = 'PROCESSING' AND provider_job IS NOT NULL",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE image_operations DROP COLUMN provider_job');
  }
}
