import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions that ended while access tokens of theirs may still be unexpired: served to the other
 * services (`GET /auth/sessions/revoked`) so a replica that missed `session.revoked.v1` catches up.
 */
export class CreateRevokedSessions1763800000200 implements MigrationInterface {
  name = 'CreateRevokedSessions1763800000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE revoked_sessions (
        session_id uuid PRIMARY KEY,
        user_id uuid NOT NULL,
        reason text NOT NULL CHECK (reason IN ('logout', 'refresh_token_reuse', 'password_changed', 'user_deleted')),
        revoked_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX revoked_sessions_expires_idx ON revoked_sessions (expires_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE revoked_sessions');
  }
}
