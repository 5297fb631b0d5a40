import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Shared files of the collaboration host (sections 3.1, 3.2, 4.8, 4.10; DECISIONS.md 6): files by
 * `<workspace>/<username>/<filename>` with their versions (a `branch` column for branch writes
 * without a filename suffix), soft deletion to the trash, branches, locks, comments and conflicts.
 */
export class CreateSharedFiles1764200000000 implements MigrationInterface {
  name = 'CreateSharedFiles1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE shared_files (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        username text NOT NULL,
        filename text NOT NULL CHECK (octet_length(filename) BETWEEN 1 AND 255),
        current_version_id uuid,
        branch_of text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz,
        deleted_by uuid REFERENCES collab_users (id),
        purge_at timestamptz
      )`);
    // One live file per name and folder; trashed ones may share it.
    await queryRunner.query(
      'CREATE UNIQUE INDEX shared_files_live_key ON shared_files (workspace_id, username, filename) WHERE deleted_at IS NULL',
    );
    await queryRunner.query(
      'CREATE INDEX shared_files_trash_idx ON shared_files (workspace_id, purge_at) WHERE deleted_at IS NOT NULL',
    );
    await queryRunner.query(`
      CREATE TABLE shared_file_versions (
        id uuid PRIMARY KEY,
        file_id uuid NOT NULL REFERENCES shared_files (id) ON DELETE CASCADE,
        number integer NOT NULL,
        branch text NOT NULL DEFAULT 'main',
        blob_key text NOT NULL,
        sha256 text NOT NULL,
        size bigint NOT NULL CHECK (size >= 0),
        content_type text NOT NULL,
        message text,
        author_id uuid NOT NULL REFERENCES collab_users (id),
        source text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (file_id, number)
      )`);
    await queryRunner.query(
      'CREATE INDEX shared_file_versions_branch_idx ON shared_file_versions (file_id, branch, number DESC)',
    );
    await queryRunner.query(
      'ALTER TABLE shared_files ADD CONSTRAINT shared_files_current_fk FOREIGN KEY (current_version_id) REFERENCES shared_file_versions (id) DEFERRABLE INITIALLY DEFERRED',
    );
    await queryRunner.query(`
      CREATE TABLE shared_file_branches (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        username text NOT NULL,
        base text NOT NULL,
        name text NOT NULL CHECK (name ~ '^[a-z0-9_-]{1,64}$' AND name <> 'main'),
        file_id uuid NOT NULL REFERENCES shared_files (id) ON DELETE CASCADE,
        suffix_file boolean NOT NULL,
        base_version_id uuid REFERENCES shared_file_versions (id) ON DELETE SET NULL,
        created_by uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await queryRunner.query(
      'CREATE UNIQUE INDEX shared_file_branches_key ON shared_file_branches (workspace_id, username, base, name) WHERE deleted_at IS NULL',
    );
    await queryRunner.query(`
      CREATE TABLE shared_file_locks (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        path text NOT NULL,
        lock_id uuid NOT NULL,
        owner_id uuid NOT NULL REFERENCES collab_users (id),
        owner_username text NOT NULL,
        acquired_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        PRIMARY KEY (workspace_id, path)
      )`);
    await queryRunner.query(`
      CREATE TABLE shared_file_comments (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        path text NOT NULL,
        author_id uuid NOT NULL REFERENCES collab_users (id),
        author_username text NOT NULL,
        body text NOT NULL,
        mentions text[] NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX shared_file_comments_path_idx ON shared_file_comments (workspace_id, path, created_at)',
    );
    await queryRunner.query(`
      CREATE TABLE shared_file_conflicts (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        base_file_id uuid NOT NULL REFERENCES shared_files (id) ON DELETE CASCADE,
        conflict_file_id uuid NOT NULL REFERENCES shared_files (id) ON DELETE CASCADE,
        author_id uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        resolved_at timestamptz,
        resolved_by uuid REFERENCES collab_users (id)
      )`);
    await queryRunner.query(
      'CREATE INDEX shared_file_conflicts_active_idx ON shared_file_conflicts (workspace_id, base_file_id) WHERE resolved_at IS NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'shared_file_conflicts',
      'shared_file_comments',
      'shared_file_locks',
      'shared_file_branches',
    ])
      await queryRunner.query(`DROP TABLE ${table}`);
    await queryRunner.query('ALTER TABLE shared_files DROP CONSTRAINT shared_files_current_fk');
    await queryRunner.query('DROP TABLE shared_file_versions');
    await queryRunner.query('DROP TABLE shared_files');
  }
}
