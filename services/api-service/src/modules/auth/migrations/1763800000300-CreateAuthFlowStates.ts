import type { MigrationInterface, QueryRunner } from 'typeorm';

/** PKCE flows of the GoTrue surface (`auth_flow_states`). */
export class CreateAuthFlowStates1763800000300 implements MigrationInterface {
  name = 'CreateAuthFlowStates1763800000300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE auth_flow_states (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        purpose text NOT NULL CHECK (purpose IN ('magiclink', 'signup', 'recovery')),
        link_hash bytea UNIQUE,
        auth_code_hash bytea UNIQUE,
        code_challenge text NOT NULL CHECK (length(code_challenge) BETWEEN 43 AND 128),
        code_challenge_method text NOT NULL CHECK (code_challenge_method IN ('s256', 'plain')),
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CHECK (link_hash IS NOT NULL OR auth_code_hash IS NOT NULL)
      )`);
    await queryRunner.query('CREATE INDEX auth_flow_states_expires_idx ON auth_flow_states (expires_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE auth_flow_states');
  }
}
