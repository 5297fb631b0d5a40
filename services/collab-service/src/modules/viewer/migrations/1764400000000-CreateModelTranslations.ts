import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Model translations for the web viewer (section 4.9): one row a file version and option set (the
 * idempotency key of `translate-file`), claimed by one worker at a time.
 */
export class CreateModelTranslations1764400000000 implements MigrationInterface {
  name = 'CreateModelTranslations1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE model_translations (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        file_id uuid NOT NULL REFERENCES shared_files (id) ON DELETE CASCADE,
        version_id uuid NOT NULL REFERENCES shared_file_versions (id) ON DELETE CASCADE,
        branch text NOT NULL DEFAULT 'main',
        name text NOT NULL,
        format text NOT NULL,
        simplify double precision,
        compress boolean NOT NULL DEFAULT false,
        options_key text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'inprogress', 'success', 'failed')),
        progress smallint NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
        reason text,
        attempts integer NOT NULL DEFAULT 0,
        claimed_by text,
        claimed_at timestamptz,
        glb_key text,
        size bigint,
        meshes integer,
        vertices bigint,
        triangles bigint,
        bounds jsonb,
        requested_by uuid REFERENCES collab_users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        UNIQUE (version_id, options_key)
      )`);
    await queryRunner.query(
      'CREATE INDEX model_translations_name_idx ON model_translations (workspace_id, name, created_at DESC)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE model_translations');
  }
}
