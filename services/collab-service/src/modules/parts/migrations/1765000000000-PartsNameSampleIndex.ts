import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trigram index of part names for one part in eight (the last hex digit of the id, random in
 * UUIDv4 and v7, is 0 or 8): a search proves a word has more than COUNT_BOUND matches from 1,001 of
 * them found here (parts-search-sql.ts). The whole index cannot stop early: a GIN scan reads every
 * match into a bitmap first, ~30-80 ms for a word in 10% of a million parts; this one reads an
 * eighth of them.
 */
export class PartsNameSampleIndex1765000000000 implements MigrationInterface {
  name = 'PartsNameSampleIndex1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX parts_name_trgm_sample_idx ON parts USING gin (lower(name) gin_trgm_ops)
       WHERE right(id::text, 1) IN ('0', '8')`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX parts_name_trgm_sample_idx');
  }
}
