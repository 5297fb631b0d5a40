import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A probe sent from this service, or one received from another (ops check of the message path). */
@Entity({ name: 'bus_probes' })
export class BusProbeEntity {
  @PrimaryColumn('uuid')
  id: string;

  @PrimaryColumn('text')
  direction: 'sent' | 'received';

  @Column('text')
  origin: string;

  @Column('text', { default: '' })
  note: string;

  @Column({ name: 'sent_at', type: 'timestamptz' })
  sentAt: Date;

  @Column({ name: 'received_at', type: 'timestamptz', nullable: true })
  receivedAt: Date | null;

  /** Blob the sender wrote for the probe (proves the storage path too); null on received rows. */
  @Column({ name: 'storage_key', type: 'text', nullable: true })
  storageKey: string | null;

  @Column({ name: 'storage_sha256', type: 'text', nullable: true })
  storageSha256: string | null;
}
