import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Hands out the ids of a workspace's events: `last_id` is the id of its latest event. */
@Entity({ name: 'collab_event_counters' })
export class CollabEventCounterEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  /** bigint: read as a string by the driver. */
  @Column({ name: 'last_id', type: 'bigint' })
  lastId: string;

  /** The workspace's change clock: the time of its latest change event (never moving backwards). */
  @Column({ name: 'changed_at', type: 'timestamptz', nullable: true })
  changedAt: Date | null;
}

/** The latest change event of one type in a workspace: its id and the change clock then. */
@Entity({ name: 'collab_event_marks' })
export class CollabEventMarkEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @PrimaryColumn('text')
  type: string;

  @Column({ name: 'last_id', type: 'bigint' })
  lastId: string;

  @Column({ name: 'changed_at', type: 'timestamptz' })
  changedAt: Date;
}

/** One event of a workspace's log, kept EVENT_LOG_RETENTION_HOURS for `Last-Event-ID` replays. */
@Entity({ name: 'collab_events' })
export class CollabEventEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  /** Monotonic and gap-free per workspace; bigint, read as a string by the driver. */
  @PrimaryColumn({ type: 'bigint' })
  id: string;

  @Column('text')
  type: string;

  /** Username of whoever caused it, or `system`. */
  @Column('text')
  actor: string;

  @Column({ type: 'text', nullable: true })
  path: string | null;

  /** The only user who receives it (`lock.request`, `mention`), else null. */
  @Column({ name: 'recipient_id', type: 'uuid', nullable: true })
  recipientId: string | null;

  /** The recipient's username as it was when the event happened. */
  @Column({ type: 'text', nullable: true })
  recipient: string | null;

  @Column('jsonb')
  data: Record<string, unknown>;

  @Column({ type: 'timestamptz' })
  at: Date;
}

/** Open event streams of a user in a workspace on one replica; refreshed while the replica lives. */
@Entity({ name: 'collab_presence' })
export class CollabPresenceEntity {
  @PrimaryColumn({ name: 'workspace_id', type: 'uuid' })
  workspaceId: string;

  @PrimaryColumn({ name: 'user_id', type: 'uuid' })
  userId: string;

  @PrimaryColumn({ name: 'replica_id', type: 'text' })
  replicaId: string;

  @Column('integer')
  connections: number;

  @Column({ name: 'seen_at', type: 'timestamptz' })
  seenAt: Date;
}

export const eventEntities = [
  CollabEventCounterEntity,
  CollabEventMarkEntity,
  CollabEventEntity,
  CollabPresenceEntity,
];
