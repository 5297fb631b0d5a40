import type { MigrationInterface, QueryRunner } from 'typeorm';

export class CreateChatMessages1764600000000 implements MigrationInterface {
  name = 'CreateChatMessages1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE chat_messages (
        id uuid PRIMARY KEY,
        tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
        room text NOT NULL CHECK (room ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        text text NOT NULL CHECK (char_length(text) BETWEEN 1 AND 4000),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // A room's history, newest first.
    await queryRunner.query(
      'CREATE INDEX chat_messages_room_idx ON chat_messages (tenant_id, room, created_at DESC, id DESC)',
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE chat_messages');
  }
}
