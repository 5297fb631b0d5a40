import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bills of material (section 2.9): BOM headers with the approval flow of DECISIONS.md section 5,
 * their lines (nesting inside the document through parent_item_id, effectivity by date, serial and
 * lot) and alternates per line.
 */
export class CreateBoms1764100000000 implements MigrationInterface {
  name = 'CreateBoms1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE boms (
        id uuid PRIMARY KEY,
        workspace_id uuid NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
        assembly_part_id uuid NOT NULL REFERENCES parts (id) ON DELETE CASCADE,
        assembly_version_id uuid REFERENCES part_versions (id) ON DELETE SET NULL,
        type text NOT NULL CHECK (type IN ('engineering', 'manufacturing')),
        revision text NOT NULL CHECK (char_length(revision) BETWEEN 1 AND 32),
        status text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'in_review', 'approved', 'rejected')),
        change_note text,
        source_bom_id uuid REFERENCES boms (id) ON DELETE SET NULL,
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
        CONSTRAINT boms_approved_check CHECK ((status = 'approved') = (approved_at IS NOT NULL)),
        CONSTRAINT boms_rejected_check CHECK ((status = 'rejected') = (rejected_at IS NOT NULL))
      )`);
    await queryRunner.query(
      'CREATE UNIQUE INDEX boms_revision_key ON boms (assembly_part_id, type, lower(revision))',
    );
    // The BOM a child part expands to: its approved one, else its latest, per type.
    await queryRunner.query(
      'CREATE INDEX boms_assembly_idx ON boms (workspace_id, type, assembly_part_id, created_at DESC)',
    );
    await queryRunner.query('CREATE INDEX boms_list_idx ON boms (workspace_id, created_at DESC, id)');

    await queryRunner.query(`
      CREATE TABLE bom_items (
        id uuid PRIMARY KEY,
        bom_id uuid NOT NULL REFERENCES boms (id) ON DELETE CASCADE,
        parent_item_id uuid REFERENCES bom_items (id) ON DELETE CASCADE,
        child_part_id uuid NOT NULL REFERENCES parts (id),
        child_version_id uuid REFERENCES part_versions (id) ON DELETE SET NULL,
        qty numeric(24, 6) NOT NULL CHECK (qty > 0),
        uom text NOT NULL DEFAULT 'each' CHECK (char_length(uom) BETWEEN 1 AND 16),
        refdes text[] NOT NULL DEFAULT '{}',
        notes text NOT NULL DEFAULT '',
        sort_index integer NOT NULL DEFAULT 0 CHECK (sort_index >= 0),
        attributes jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(attributes) = 'object'),
        date_from date,
        date_to date,
        serial_from bigint CHECK (serial_from >= 0),
        serial_to bigint CHECK (serial_to >= 0),
        lot_from text,
        lot_to text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT bom_items_dates_check CHECK (date_from IS NULL OR date_to IS NULL OR date_from <= date_to),
        CONSTRAINT bom_items_serials_check CHECK (serial_from IS NULL OR serial_to IS NULL OR serial_from <= serial_to),
        CONSTRAINT bom_items_lots_check CHECK (lot_from IS NULL OR lot_to IS NULL OR lot_from <= lot_to)
      )`);
    await queryRunner.query('CREATE INDEX bom_items_bom_idx ON bom_items (bom_id, sort_index, id)');
    // Where-used walks from a part up to the BOMs listing it.
    await queryRunner.query('CREATE INDEX bom_items_child_idx ON bom_items (child_part_id)');
    await queryRunner.query('CREATE INDEX bom_items_parent_idx ON bom_items (parent_item_id)');

    await queryRunner.query(`
      CREATE TABLE bom_item_alternates (
        item_id uuid NOT NULL REFERENCES bom_items (id) ON DELETE CASCADE,
        part_id uuid NOT NULL REFERENCES parts (id),
        position integer NOT NULL,
        approval text NOT NULL CHECK (approval IN ('approved', 'conditional', 'rejected')),
        rationale text NOT NULL DEFAULT '',
        proposed_by uuid NOT NULL REFERENCES collab_users (id),
        approved_by uuid REFERENCES collab_users (id),
        PRIMARY KEY (item_id, part_id)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE bom_item_alternates');
    await queryRunner.query('DROP TABLE bom_items');
    await queryRunner.query('DROP TABLE boms');
  }
}
