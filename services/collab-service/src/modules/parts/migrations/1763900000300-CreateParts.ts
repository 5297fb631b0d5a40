import type { MigrationInterface, QueryRunner } from 'typeorm';

const DOMAINS = `('mechanical', 'electronic', 'electrical', 'chemical', 'other')`;

/**
 * Parts (section 2.8), their versions with the approval flow of DECISIONS.md section 5, their audit
 * history, the per-workspace BOM settings (numbering rules, domain templates) and the numbering
 * counters. Search indexes serve the list filters of section 4.6.
 */
export class CreateParts1763900000300 implements MigrationInterface {
  name = 'CreateParts1763900000300';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await queryRunner.query(`
      CREATE TABLE parts (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        part_number text NOT NULL CHECK (char_length(part_number) BETWEEN 1 AND 64),
        name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
        description text NOT NULL DEFAULT '',
        domain text NOT NULL DEFAULT 'other' CHECK (domain IN ${DOMAINS}),
        uom text NOT NULL DEFAULT 'each',
        lifecycle text NOT NULL DEFAULT 'prototype'
          CHECK (lifecycle IN ('prototype', 'released', 'on_hold', 'obsolete')),
        tags text[] NOT NULL DEFAULT '{}',
        attributes jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(attributes) = 'object'),
        manufacturer_name text,
        manufacturer_part_number text,
        unit_cost numeric(18, 6) CHECK (unit_cost >= 0),
        currency text CHECK (currency ~ '^[A-Z]{3}$'),
        rohs_compliant boolean,
        reach_compliant boolean,
        conflict_minerals text,
        created_by uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    // Unique per workspace regardless of case; text_pattern_ops lets it serve prefix search too.
    await queryRunner.query(
      'CREATE UNIQUE INDEX parts_workspace_number_key ON parts (workspace_id, lower(part_number) text_pattern_ops)',
    );
    await queryRunner.query(
      'CREATE INDEX parts_mpn_prefix_idx ON parts (workspace_id, lower(manufacturer_part_number) text_pattern_ops)',
    );
    await queryRunner.query('CREATE INDEX parts_name_trgm_idx ON parts USING gin (lower(name) gin_trgm_ops)');
    await queryRunner.query('CREATE INDEX parts_tags_idx ON parts USING gin (tags)');
    // The sort keys, workspace first, id as the paging tiebreaker.
    for (const column of [
      'part_number',
      'name',
      'domain',
      'lifecycle',
      'manufacturer_part_number',
      'updated_at',
    ]) {
      await queryRunner.query(`CREATE INDEX parts_sort_${column}_idx ON parts (workspace_id, ${column}, id)`);
    }

    await queryRunner.query(`
      CREATE TABLE part_versions (
        id uuid PRIMARY KEY,
        part_id uuid NOT NULL REFERENCES parts (id) ON DELETE CASCADE,
        revision text NOT NULL CHECK (char_length(revision) BETWEEN 1 AND 32),
        status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'in_review', 'approved', 'rejected')),
        change_note text,
        data jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(data) = 'object'),
        created_by uuid NOT NULL REFERENCES collab_users (id),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        submitted_by uuid REFERENCES collab_users (id),
        submitted_at timestamptz,
        approved_by uuid REFERENCES collab_users (id),
        approved_at timestamptz,
        rejected_by uuid REFERENCES collab_users (id),
        rejected_at timestamptz,
        rejection_reason text,
        CONSTRAINT part_versions_approved_check CHECK ((status = 'approved') = (approved_at IS NOT NULL)),
        CONSTRAINT part_versions_rejected_check CHECK ((status = 'rejected') = (rejected_at IS NOT NULL))
      )`);
    await queryRunner.query(
      'CREATE UNIQUE INDEX part_versions_revision_key ON part_versions (part_id, lower(revision))',
    );

    await queryRunner.query(`
      CREATE TABLE part_history (
        id uuid PRIMARY KEY,
        part_id uuid NOT NULL REFERENCES parts (id) ON DELETE CASCADE,
        actor uuid NOT NULL REFERENCES collab_users (id),
        at timestamptz NOT NULL DEFAULT now(),
        action text NOT NULL,
        changes jsonb NOT NULL DEFAULT '{}'
      )`);
    await queryRunner.query('CREATE INDEX part_history_part_idx ON part_history (part_id, at, id)');

    await queryRunner.query(`
      CREATE TABLE bom_settings (
        workspace_id uuid PRIMARY KEY REFERENCES workspaces (id) ON DELETE CASCADE,
        numbering_rules jsonb NOT NULL,
        domain_templates jsonb NOT NULL,
        updated_by uuid NOT NULL REFERENCES collab_users (id),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    // One row per workspace and domain: incrementing it in the create transaction hands out
    // numbers without duplicates under concurrency (the row lock queues concurrent creates).
    await queryRunner.query(`
      CREATE TABLE part_number_counters (
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        domain text NOT NULL CHECK (domain IN ${DOMAINS}),
        last_value bigint NOT NULL CHECK (last_value >= 0),
        PRIMARY KEY (workspace_id, domain)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE part_number_counters');
    await queryRunner.query('DROP TABLE bom_settings');
    await queryRunner.query('DROP TABLE part_history');
    await queryRunner.query('DROP TABLE part_versions');
    await queryRunner.query('DROP TABLE parts');
  }
}
