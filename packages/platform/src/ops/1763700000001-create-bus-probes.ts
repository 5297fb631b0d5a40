import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateBusProbes1763700000001 implements MigrationInterface {
  name = 'CreateBusProbes1763700000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE bus_probes (
        id uuid NOT NULL,
        direction text NOT NULL CHECK (direction IN ('sent', 'received')),
        origin text NOT NULL,
        note text NOT NULL DEFAULT '',
        sent_at timestamptz NOT NULL,
        received_at timestamptz,
        storage_key text,
        storage_sha256 text CHECK (storage_sha256 ~ '^[0-9a-f]{64}$'),
        PRIMARY KEY (id, direction),
        CHECK ((direction = 'received') = (received_at IS NOT NULL))
      )`);
    await queryRunner.query('CREATE INDEX bus_probes_sent_at_idx ON bus_probes (sent_at DESC)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE bus_probes');
  }
}
