import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The workspace stats count by status and overdue from the indexes alone (index-only scans): the
 * status indexes carry `due_at`, and review tasks get one on their review with status and due date.
 */
export class StatsIndexes1764300000200 implements MigrationInterface {
  name = 'StatsIndexes1764300000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX tasks_status_idx');
    await queryRunner.query(
      'CREATE INDEX tasks_status_idx ON tasks (workspace_id, status, created_at DESC) INCLUDE (due_at) WHERE deleted_at IS NULL',
    );
    await queryRunner.query('DROP INDEX design_reviews_status_idx');
    await queryRunner.query(
      'CREATE INDEX design_reviews_status_idx ON design_reviews (workspace_id, status, created_at DESC) INCLUDE (due_at)',
    );
    await queryRunner.query(
      'CREATE INDEX review_tasks_status_idx ON review_tasks (review_id) INCLUDE (status, due_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX review_tasks_status_idx');
    await queryRunner.query('DROP INDEX design_reviews_status_idx');
    await queryRunner.query(
      'CREATE INDEX design_reviews_status_idx ON design_reviews (workspace_id, status, created_at DESC)',
    );
    await queryRunner.query('DROP INDEX tasks_status_idx');
    await queryRunner.query(
      'CREATE INDEX tasks_status_idx ON tasks (workspace_id, status, created_at DESC) WHERE deleted_at IS NULL',
    );
  }
}
