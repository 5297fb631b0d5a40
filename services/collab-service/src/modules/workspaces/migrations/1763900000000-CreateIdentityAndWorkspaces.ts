import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Collaboration users, browser sessions, workspaces and their members. */
export class CreateIdentityAndWorkspaces1763900000000 implements MigrationInterface {
  name = 'CreateIdentityAndWorkspaces1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE collab_users (
        id uuid PRIMARY KEY,
        email text NOT NULL DEFAULT '',
        username text NOT NULL UNIQUE CHECK (username ~ '^[a-z0-9][a-z0-9._-]{0,63}$'),
        display_name text NOT NULL DEFAULT '',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query('CREATE INDEX collab_users_email_idx ON collab_users (lower(email))');

    await queryRunner.query(`
      CREATE TABLE collab_sessions (
        sid text PRIMARY KEY,
        sess jsonb NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX collab_sessions_expires_idx ON collab_sessions (expires_at)');

    await queryRunner.query(`
      CREATE TABLE workspaces (
        id uuid PRIMARY KEY,
        name text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][a-z0-9._-]{1,63}$'),
        created_by uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE workspace_members (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES collab_users (id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('viewer', 'engineer', 'manager', 'owner')),
        joined_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (workspace_id, user_id)
      )`);
    await queryRunner.query(
      'CREATE INDEX workspace_members_user_idx ON workspace_members (user_id, joined_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE workspace_members');
    await queryRunner.query('DROP TABLE workspaces');
    await queryRunner.query('DROP TABLE collab_sessions');
    await queryRunner.query('DROP TABLE collab_users');
  }
}
