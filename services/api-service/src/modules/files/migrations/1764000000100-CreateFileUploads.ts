import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Large uploads in flight (pre-signed multipart), until completed or expired. */
export class CreateFileUploads1764000000100 implements MigrationInterface {
  name = 'CreateFileUploads1764000000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE file_uploads (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        multipart_id text NOT NULL,
        blob_key text NOT NULL,
        name text NOT NULL,
        folder_path text NOT NULL,
        size bigint NOT NULL CHECK (size > 0),
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await queryRunner.query('CREATE INDEX file_uploads_expires_idx ON file_uploads (expires_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE file_uploads');
  }
}
