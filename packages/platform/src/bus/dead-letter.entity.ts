import type { EventEnvelope } from '@hwp/contracts';
import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A message the in-process bus gave up on (see CreateDeadLetters1763700000003); replayable once. */
@Entity({ name: 'dead_letters' })
export class DeadLetterEntity {
  @PrimaryColumn('uuid')
  id: string;

  /** Consumer queue it died in, `<serviceName>.<consumer>`. */
  @Column('text')
  queue: string;

  @Column({ name: 'routing_key', type: 'text' })
  routingKey: string;

  /** The body as delivered. */
  @Column('text')
  content: string;

  /** The decoded envelope; null when the body was not one. */
  @Column({ type: 'jsonb', nullable: true })
  envelope: EventEnvelope | null;

  @Column({ name: 'event_id', type: 'uuid', nullable: true })
  eventId: string | null;

  @Column('int')
  attempts: number;

  @Column('text')
  error: string;

  @Column({ name: 'dead_lettered_at', type: 'timestamptz' })
  deadLetteredAt: Date;

  @Column({ name: 'replayed_at', type: 'timestamptz', nullable: true })
  replayedAt: Date | null;
}
