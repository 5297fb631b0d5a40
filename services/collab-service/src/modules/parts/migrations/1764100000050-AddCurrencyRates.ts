import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Exchange rates for BOM cost rollups in the workspace's BOM settings (null: none given). */
export class AddCurrencyRates1764100000050 implements MigrationInterface {
  name = 'AddCurrencyRates1764100000050';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE bom_settings ADD COLUMN currency_rates jsonb');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE bom_settings DROP COLUMN currency_rates');
  }
}
