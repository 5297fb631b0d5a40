import type { DataSource } from 'typeorm';
import type { DeadLetterSink } from './memory-dead-letters';

/**
 * Stores a memory transport's dead letters in `dataSource`'s `dead_letters` table. The letter's id is
 * the key, so a write retried after an answer that got lost stores it once.
 */
export function deadLetterTable(dataSource: DataSource): DeadLetterSink {
  return async (letter) => {
    await dataSource.query(
      `INSERT INTO dead_letters
         (id, queue, routing_key, content, envelope, event_id, attempts, error, dead_lettered_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9)
       ON CONFLICT (id) DO NOTHING`,
      [
        letter.id,
        letter.queue,
        letter.routingKey,
        letter.content,
        letter.envelope ? JSON.stringify(letter.envelope) : null,
        letter.envelope?.id ?? null,
        letter.attempts,
        letter.error,
        letter.deadLetteredAt,
      ],
    );
  };
}
