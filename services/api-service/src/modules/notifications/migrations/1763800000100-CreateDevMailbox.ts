import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The dev mailbox: notifications kept instead of sent when no transport is configured (not production). */
export class CreateDevMailbox1763800000100 implements MigrationInterface {
  name = 'CreateDevMailbox1763800000100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE dev_mailbox (
        id uuid PRIMARY KEY,
        event_id uuid NOT NULL UNIQUE,
        channel text NOT NULL CHECK (channel IN ('email', 'sms')),
        recipient text NOT NULL,
        template text NOT NULL,
        subject text,
        body text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      'CREATE INDEX dev_mailbox_recipient_created_idx ON dev_mailbox (recipient, created_at DESC)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE dev_mailbox');
  }
}
