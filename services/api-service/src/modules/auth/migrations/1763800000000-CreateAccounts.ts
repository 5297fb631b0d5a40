import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Users, their identities, sessions, refresh tokens and one-time codes; tenants and memberships. */
export class CreateAccounts1763800000000 implements MigrationInterface {
  name = 'CreateAccounts1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY,
        email text CHECK (email = lower(email) AND length(email) <= 254),
        phone text CHECK (phone ~ '^\\+[1-9][0-9]{6,14}$'),
        encrypted_password text,
        email_confirmed_at timestamptz,
        phone_confirmed_at timestamptz,
        last_sign_in_at timestamptz,
        role text NOT NULL DEFAULT 'authenticated',
        provider text NOT NULL CHECK (provider IN ('email', 'phone')),
        user_metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
        default_tenant_id uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (email IS NOT NULL OR phone IS NOT NULL)
      )`);
    await queryRunner.query('CREATE UNIQUE INDEX users_email_key ON users (email) WHERE email IS NOT NULL');
    await queryRunner.query('CREATE UNIQUE INDEX users_phone_key ON users (phone) WHERE phone IS NOT NULL');

    await queryRunner.query(`
      CREATE TABLE identities (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        provider text NOT NULL CHECK (provider IN ('email', 'phone')),
        provider_id text NOT NULL,
        last_sign_in_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (provider, provider_id)
      )`);
    await queryRunner.query('CREATE INDEX identities_user_idx ON identities (user_id)');

    await queryRunner.query(`
      CREATE TABLE auth_sessions (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        user_agent text,
        ip text,
        created_at timestamptz NOT NULL DEFAULT now(),
        refreshed_at timestamptz
      )`);
    await queryRunner.query('CREATE INDEX auth_sessions_user_idx ON auth_sessions (user_id)');

    // Only hashes are stored. A rotated token keeps its row (revoked_at set) so its reuse is
    // recognised; the one live token per session is enforced by the partial unique index.
    await queryRunner.query(`
      CREATE TABLE refresh_tokens (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id uuid NOT NULL REFERENCES auth_sessions (id) ON DELETE CASCADE,
        token_hash bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
        parent_id bigint REFERENCES refresh_tokens (id) ON DELETE CASCADE,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query('CREATE INDEX refresh_tokens_session_idx ON refresh_tokens (session_id)');
    await queryRunner.query('CREATE INDEX refresh_tokens_parent_idx ON refresh_tokens (parent_id)');
    await queryRunner.query(
      'CREATE UNIQUE INDEX refresh_tokens_live_key ON refresh_tokens (session_id) WHERE revoked_at IS NULL',
    );

    // One live code per purpose and recipient; redeemed codes are deleted. user_id is null for
    // addresses without an account, so a resend is throttled the same whether the account exists.
    await queryRunner.query(`
      CREATE TABLE one_time_codes (
        id uuid PRIMARY KEY,
        user_id uuid REFERENCES users (id) ON DELETE CASCADE,
        purpose text NOT NULL CHECK (purpose IN ('magiclink', 'signup', 'recovery', 'sms')),
        recipient text NOT NULL,
        code_hash bytea NOT NULL CHECK (length(code_hash) = 32),
        link_hash bytea UNIQUE CHECK (length(link_hash) = 32),
        redirect_to text,
        attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        UNIQUE (purpose, recipient)
      )`);
    await queryRunner.query('CREATE INDEX one_time_codes_expires_idx ON one_time_codes (expires_at)');

    await queryRunner.query(`
      CREATE TABLE tenants (
        id uuid PRIMARY KEY,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        slug text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9](-?[a-z0-9])+$' AND length(slug) <= 63),
        settings jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(settings) = 'object'),
        personal boolean NOT NULL DEFAULT false,
        created_by uuid REFERENCES users (id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE tenant_members (
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, user_id)
      )`);
    await queryRunner.query('CREATE INDEX tenant_members_user_idx ON tenant_members (user_id, created_at)');
    await queryRunner.query(
      'ALTER TABLE users ADD CONSTRAINT users_default_tenant_fk FOREIGN KEY (default_tenant_id) REFERENCES tenants (id) ON DELETE SET NULL',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE users DROP CONSTRAINT users_default_tenant_fk');
    await queryRunner.query('DROP TABLE tenant_members');
    await queryRunner.query('DROP TABLE tenants');
    await queryRunner.query('DROP TABLE one_time_codes');
    await queryRunner.query('DROP TABLE refresh_tokens');
    await queryRunner.query('DROP TABLE auth_sessions');
    await queryRunner.query('DROP TABLE identities');
    await queryRunner.query('DROP TABLE users');
  }
}
