import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenant membership by consent: `POST /tenant/{id}/members` makes an invitation; the addressee
 * accepts or declines it. At most one pending invitation per tenant and address (a second invite
 * renews it). Accounts that never signed in and have no personal tenant (made before personal
 * tenants came with sign-up, and possibly added to somebody's tenant without their consent) get
 * theirs now, as their default tenant, so their first request does not land in that tenant.
 */
export class CreateTenantInvitations1764800000000 implements MigrationInterface {
  name = 'CreateTenantInvitations1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE tenant_invitations (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        email text NOT NULL CHECK (email = lower(email)),
        role text NOT NULL CHECK (role IN ('member', 'admin', 'owner')),
        token_hash bytea NOT NULL UNIQUE,
        status text NOT NULL CHECK (status IN ('pending', 'accepted', 'declined', 'revoked')),
        invited_by uuid REFERENCES users(id) ON DELETE SET NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        responded_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX tenant_invitations_pending_key ON tenant_invitations (tenant_id, email)
         WHERE status = 'pending'`,
    );
    await queryRunner.query(
      `CREATE INDEX tenant_invitations_email_idx ON tenant_invitations (email, created_at) WHERE status = 'pending'`,
    );
    await queryRunner.query(`
      WITH lacking AS (
        SELECT u.id AS user_id, gen_random_uuid() AS tenant_id,
               left(coalesce(u.user_metadata->>'first_name', split_part(u.email, '@', 1), u.phone, 'Personal'), 88)
                 || ' (personal)' AS name
          FROM users u
         WHERE u.last_sign_in_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.personal AND t.created_by = u.id)
      ), made AS (
        INSERT INTO tenants (id, name, slug, settings, personal, created_by)
        SELECT tenant_id, name, 'personal-' || replace(user_id::text, '-', ''), '{}', true, user_id FROM lacking
        RETURNING id, created_by
      ), joined AS (
        INSERT INTO tenant_members (tenant_id, user_id, role) SELECT id, created_by, 'owner' FROM made
      )
      UPDATE users u SET default_tenant_id = made.id FROM made WHERE u.id = made.created_by`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE tenant_invitations');
  }
}
