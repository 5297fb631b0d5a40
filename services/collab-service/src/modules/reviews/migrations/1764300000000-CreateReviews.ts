import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Design reviews with their tasks, review templates and tasks on paths (section 4.11), with the
 * state machines of DECISIONS.md 5 as CHECKs of the status values.
 */
export class CreateReviews1764300000000 implements MigrationInterface {
  name = 'CreateReviews1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE review_templates (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        name text NOT NULL,
        message text NOT NULL DEFAULT '',
        checklist jsonb NOT NULL CHECK (jsonb_typeof(checklist) = 'array'),
        created_by uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE UNIQUE INDEX review_templates_name_key ON review_templates (workspace_id, lower(name))',
    );
    await queryRunner.query(`
      CREATE TABLE design_reviews (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        path text NOT NULL,
        version_id uuid,
        reviewer_email text NOT NULL,
        reviewer_id uuid REFERENCES collab_users (id),
        message text NOT NULL DEFAULT '',
        due_at timestamptz,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_review', 'completed', 'canceled')),
        template_id uuid REFERENCES review_templates (id) ON DELETE SET NULL,
        created_by uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX design_reviews_path_idx ON design_reviews (workspace_id, path, created_at)',
    );
    await queryRunner.query(
      'CREATE INDEX design_reviews_status_idx ON design_reviews (workspace_id, status, created_at DESC)',
    );
    await queryRunner.query(`
      CREATE TABLE review_tasks (
        id uuid PRIMARY KEY,
        review_id uuid NOT NULL REFERENCES design_reviews (id) ON DELETE CASCADE,
        title text NOT NULL,
        description text NOT NULL DEFAULT '',
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'done', 'canceled')),
        due_at timestamptz,
        sort_index integer NOT NULL DEFAULT 0,
        created_by uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX review_tasks_review_idx ON review_tasks (review_id, sort_index, id)',
    );
    await queryRunner.query(`
      CREATE TABLE tasks (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        path text NOT NULL,
        title text NOT NULL,
        description text NOT NULL DEFAULT '',
        owner_email text,
        owner_id uuid REFERENCES collab_users (id),
        due_at timestamptz,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'done', 'canceled')),
        sort_index integer NOT NULL DEFAULT 0,
        created_by uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await queryRunner.query(
      'CREATE INDEX tasks_path_idx ON tasks (workspace_id, path, sort_index) WHERE deleted_at IS NULL',
    );
    await queryRunner.query(
      'CREATE INDEX tasks_status_idx ON tasks (workspace_id, status, created_at DESC) WHERE deleted_at IS NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['tasks', 'review_tasks', 'design_reviews', 'review_templates'])
      await queryRunner.query(`DROP TABLE ${table}`);
  }
}
