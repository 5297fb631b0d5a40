import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateImageTools1764600000100 implements MigrationInterface {
  name = 'CreateImageTools1764600000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE image_operations (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        tool text NOT NULL,
        status text NOT NULL CHECK (status IN ('PROCESSING', 'COMPLETED', 'ERROR')),
        input jsonb NOT NULL,
        result_file_ids uuid[] NOT NULL DEFAULT '{}',
        analysis text,
        error_message text,
        created_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        CHECK ((status = 'PROCESSING') = (completed_at IS NULL))
      )`);
    await queryRunner.query(
      'CREATE INDEX image_operations_user_idx ON image_operations (tenant_id, user_id, created_at DESC)',
    );
    await queryRunner.query(`
      CREATE TABLE custom_styles (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
        description text NOT NULL DEFAULT '',
        reference_images text[] NOT NULL,
        palette text[] NOT NULL,
        created_by uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX custom_styles_tenant_idx ON custom_styles (tenant_id, created_at DESC)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE custom_styles');
    await queryRunner.query('DROP TABLE image_operations');
  }
}
