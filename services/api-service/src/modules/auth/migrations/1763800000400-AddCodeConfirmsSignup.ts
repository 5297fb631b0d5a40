import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `one_time_codes.confirms_signup`: the code was sent by the signup (or its resend) that set the
 * account's password, so redeeming it proves that signer owns the address. Any other first
 * confirmation (a magic link, a phone sign-in code) drops a password nobody had proven.
 */
export class AddCodeConfirmsSignup1763800000400 implements MigrationInterface {
  name = 'AddCodeConfirmsSignup1763800000400';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      'ALTER TABLE one_time_codes ADD COLUMN confirms_signup boolean NOT NULL DEFAULT false',
    );
    // Live signup codes (email) were all sent by a signup; SMS codes of unconfirmed accounts cannot
    // be told apart and are left as sign-in codes (their owner resends or sets a new password).
    await queryRunner.query(`UPDATE one_time_codes SET confirms_signup = true WHERE purpose = 'signup'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE one_time_codes DROP COLUMN confirms_signup');
  }
}
