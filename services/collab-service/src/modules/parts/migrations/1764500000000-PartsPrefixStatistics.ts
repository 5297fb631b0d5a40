import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Finer statistics for the normalised part number and MPN (the prefix indexes' expression columns):
 * with the default 100 histogram buckets, a prefix that matches a hundred parts could be estimated at
 * 1% of the table, and the planner then walked the sort index filtering every part instead of reading
 * the prefix range (a prefix search of 200,000 parts took up to 150 ms instead of 1 ms).
 */
export class PartsPrefixStatistics1764500000000 implements MigrationInterface {
  name = 'PartsPrefixStatistics1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER INDEX parts_workspace_number_key ALTER COLUMN 2 SET STATISTICS 1000');
    await queryRunner.query('ALTER INDEX parts_mpn_prefix_idx ALTER COLUMN 2 SET STATISTICS 1000');
    await queryRunner.query('ANALYZE parts');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER INDEX parts_workspace_number_key ALTER COLUMN 2 SET STATISTICS -1');
    await queryRunner.query('ALTER INDEX parts_mpn_prefix_idx ALTER COLUMN 2 SET STATISTICS -1');
  }
}
