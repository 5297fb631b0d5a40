import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A notification kept instead of sent, outside production, when no transport is configured for its
 * channel; `GET /dev/mailbox` reads them.
 */
@Entity({ name: 'dev_mailbox' })
@Check(`channel IN ('email', 'sms')`)
// The migration makes created_at DESC, which the decorator cannot say.
@Index('dev_mailbox_recipient_created_idx', ['recipient', 'createdAt'])
export class DevMailboxMessageEntity {
  @PrimaryColumn('uuid')
  id: string;

  /** The `notification.requested.v1` event; unique, so a redelivery cannot add a second row. */
  @Column({ name: 'event_id', type: 'uuid', unique: true })
  eventId: string;

  @Column('text')
  channel: 'email' | 'sms';

  /** Lowercased email or E.164 phone. */
  @Column('text')
  recipient: string;

  @Column('text')
  template: string;

  @Column({ type: 'text', nullable: true })
  subject: string | null;

  @Column('text')
  body: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
