import type { EventEnvelope } from '@hwp/contracts';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { DeadLetterEntity } from './dead-letter.entity';

/**
 * An event written in the same transaction as the business change that caused it; the relay
 * publishes it later. The bus itself talks to this table with SQL (so it works with any manager);
 * the entity is there for services that want to query or inspect it.
 */
@Entity({ name: 'outbox' })
@Index('outbox_unpublished_idx', ['createdAt'], { where: 'published_at IS NULL' })
export class OutboxEntry {
  /** The envelope id. */
  @PrimaryColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  type: string;

  @Column({ type: 'jsonb' })
  envelope: EventEnvelope;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt: Date | null;

  @Column({ type: 'int', default: 0 })
  attempts: number;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;
}

/** One row per event a consumer has handled; its presence makes redelivery a no-op. */
@Entity({ name: 'inbox' })
export class InboxEntry {
  @PrimaryColumn('text')
  consumer: string;

  @PrimaryColumn('uuid', { name: 'event_id' })
  eventId: string;

  @Column({ name: 'processed_at', type: 'timestamptz', default: () => 'now()' })
  processedAt: Date;
}

export const busEntities = [OutboxEntry, InboxEntry, DeadLetterEntity];
