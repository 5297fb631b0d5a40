import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Workspace invitations: a hashed single-use code per row, one pending invitation per address and workspace. */
export class CreateInvitations1763900000200 implements MigrationInterface {
  name = 'CreateInvitations1763900000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE invitations (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        email text NOT NULL CHECK (char_length(email) BETWEEN 3 AND 254 AND email LIKE '_%@_%'),
        role text NOT NULL CHECK (role IN ('viewer', 'engineer', 'manager', 'owner')),
        code_hash text NOT NULL UNIQUE CHECK (code_hash ~ '^[0-9a-f]{64}$'),
        invited_by uuid NOT NULL REFERENCES collab_users (id),
        invited_by_name text NOT NULL CHECK (char_length(invited_by_name) BETWEEN 1 AND 100),
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'revoked')),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        accepted_at timestamptz,
        accepted_by uuid REFERENCES collab_users (id) ON DELETE SET NULL,
        CONSTRAINT invitations_expiry_check CHECK (expires_at > created_at),
        CONSTRAINT invitations_accepted_check CHECK ((status = 'accepted') = (accepted_at IS NOT NULL))
      )`);
    // "Sent to me" lookups, optionally within one workspace.
    await queryRunner.query('CREATE INDEX invitations_email_idx ON invitations (lower(email), workspace_id)');
    await queryRunner.query(
      'CREATE INDEX invitations_workspace_created_idx ON invitations (workspace_id, created_at DESC)',
    );
    await queryRunner.query(
      'CREATE INDEX invitations_inviter_created_idx ON invitations (invited_by, created_at DESC)',
    );
    // A new invitation to the same address revokes the pending one first; this keeps it at one.
    await queryRunner.query(
      "CREATE UNIQUE INDEX invitations_one_pending_idx ON invitations (workspace_id, lower(email)) WHERE status = 'pending'",
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE invitations');
  }
}
