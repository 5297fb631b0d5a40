import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Files, their revisions (immutable bytes), annotations and replies; all tenant-owned. */
export class CreateFiles1764000000000 implements MigrationInterface {
  name = 'CreateFiles1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE files (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        folder_path text NOT NULL,
        name text NOT NULL,
        product_id text,
        description text NOT NULL DEFAULT '',
        tags text[] NOT NULL DEFAULT '{}',
        is_public boolean NOT NULL DEFAULT false,
        permissions jsonb NOT NULL DEFAULT '{"view":[],"edit":[],"delete":[]}',
        current_revision_id uuid NOT NULL,
        revision_count integer NOT NULL,
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        search tsvector,
        UNIQUE (tenant_id, folder_path, name)
      )`);
    await queryRunner.query('CREATE INDEX files_tenant_folder_idx ON files (tenant_id, folder_path)');
    await queryRunner.query('CREATE INDEX files_tags_idx ON files USING gin (tags)');
    await queryRunner.query('CREATE INDEX files_search_idx ON files USING gin (search)');
    await queryRunner.query(
      'CREATE INDEX files_permissions_idx ON files USING gin (permissions jsonb_path_ops)',
    );
    await queryRunner.query(`
      CREATE TABLE file_revisions (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        file_id uuid NOT NULL REFERENCES files (id) ON DELETE CASCADE,
        number integer NOT NULL CHECK (number >= 1),
        name text NOT NULL,
        blob_key text NOT NULL,
        size bigint NOT NULL CHECK (size >= 0),
        sha256 text NOT NULL,
        mime_type text NOT NULL,
        created_by uuid NOT NULL,
        created_at timestamptz NOT NULL,
        reverted_from uuid REFERENCES file_revisions (id) ON DELETE SET NULL,
        processing_status text NOT NULL DEFAULT 'pending'
          CHECK (processing_status IN ('pending', 'processing', 'ready', 'quarantined', 'failed')),
        classification text,
        metadata jsonb NOT NULL DEFAULT '{}',
        stages jsonb NOT NULL DEFAULT '{}',
        text_content text,
        UNIQUE (file_id, number)
      )`);
    await queryRunner.query(`
      CREATE TABLE file_annotations (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        file_id uuid NOT NULL REFERENCES files (id) ON DELETE CASCADE,
        revision_id uuid REFERENCES file_revisions (id) ON DELETE SET NULL,
        user_id uuid NOT NULL,
        text text NOT NULL,
        position jsonb NOT NULL,
        target jsonb NOT NULL,
        color text NOT NULL,
        status text NOT NULL CHECK (status IN ('open', 'in-progress', 'resolved')),
        created_at timestamptz NOT NULL
      )`);
    await queryRunner.query(
      'CREATE INDEX file_annotations_file_idx ON file_annotations (file_id, created_at)',
    );
    await queryRunner.query(`
      CREATE TABLE file_annotation_replies (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        annotation_id uuid NOT NULL REFERENCES file_annotations (id) ON DELETE CASCADE,
        user_id uuid NOT NULL,
        text text NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await queryRunner.query(
      'CREATE INDEX file_annotation_replies_idx ON file_annotation_replies (annotation_id, created_at)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE file_annotation_replies');
    await queryRunner.query('DROP TABLE file_annotations');
    await queryRunner.query('DROP TABLE file_revisions');
    await queryRunner.query('DROP TABLE files');
  }
}
