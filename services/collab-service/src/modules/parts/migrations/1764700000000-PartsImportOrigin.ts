import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The import that created a part and the row of its file: the part's `import.created` history entry
 * is read from these and the part itself, not stored as a row of its own (a history row per created
 * part cost an applied import as much again as the COPY of the parts: a heap row, two index entries
 * and two foreign-key checks each). Null for parts created any other way. No foreign key: an import
 * is not a row of its own, its id is the one its report and its `part` event name.
 */
export class PartsImportOrigin1764700000000 implements MigrationInterface {
  name = 'PartsImportOrigin1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE parts ADD COLUMN import_id uuid, ADD COLUMN import_row integer');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE parts DROP COLUMN import_id, DROP COLUMN import_row');
  }
}
