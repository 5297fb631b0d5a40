import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The BOM a part expands into (its approved one, else its latest: CHOSEN_BOM in bom-tree.ts) read as
 * the first entry of one index range, with no sort: a tree read asks it once per distinct line (5,000
 * times for a 20,000-line tree in bench/bom), and the sort of each probe was half of the expansion's
 * time. It covers the old (workspace, type, assembly part, created) index, which goes.
 */
export class BomsChosenIndex1765100000000 implements MigrationInterface {
  name = 'BomsChosenIndex1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX boms_chosen_idx ON boms
         (workspace_id, type, assembly_part_id, (status = 'approved') DESC, created_at DESC, id DESC)`,
    );
    await queryRunner.query('DROP INDEX boms_assembly_idx');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'CREATE INDEX boms_assembly_idx ON boms (workspace_id, type, assembly_part_id, created_at DESC)',
    );
    await queryRunner.query('DROP INDEX boms_chosen_idx');
  }
}
