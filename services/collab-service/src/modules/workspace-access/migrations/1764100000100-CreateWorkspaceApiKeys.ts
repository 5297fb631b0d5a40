import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Workspace API keys: read-only credentials for integrations, stored as the sha256 of their secret. */
export class CreateWorkspaceApiKeys1764100000100 implements MigrationInterface {
  name = 'CreateWorkspaceApiKeys1764100000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE workspace_api_keys (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        prefix text NOT NULL,
        secret_hash text NOT NULL,
        created_by uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      )`);
    await queryRunner.query(
      'CREATE INDEX workspace_api_keys_workspace_idx ON workspace_api_keys (workspace_id, created_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE workspace_api_keys');
  }
}
