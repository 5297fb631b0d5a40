import type { CollabEvent } from './collab-events';

/** RabbitMQ topic exchange that carries every integration event. */
export const EVENTS_EXCHANGE = 'hwp.events';

/**
 * Routing keys, `<aggregate>.<event>.v<N>` (DECISIONS.md section 7).
 * A breaking change publishes a v2 key beside v1; additive changes keep the version.
 */
export const RoutingKeys = {
  fileUploaded: 'file.uploaded.v1',
  fileProcessed: 'file.processed.v1',
  /** A chat message of a tenant (WebSocket rooms, `ChatMessageData`). */
  chatMessage: 'chat.message.v1',
  /** An image operation changed state (`ImageOperationUpdatedData`). */
  imageOperationUpdated: 'image.operation.updated.v1',
  notificationRequested: 'notification.requested.v1',
  userUpdated: 'user.updated.v1',
  /** Sessions the API host ended: their access tokens must be refused everywhere before `exp`. */
  sessionRevoked: 'session.revoked.v1',
  /** A user's membership of a tenant ended (removed or left): `TenantMemberRemovedData`. */
  tenantMemberRemoved: 'tenant.member_removed.v1',
  /** Session cookies the collaboration host signed out: `CollabSessionEndedData`. */
  collabSessionEnded: 'collab.session_ended.v1',
  /** One event of a workspace's log, for every collaboration replica to push to its SSE clients. */
  collabEvent: 'collab.event.v1',
  systemProbe: 'system.probe.v1',
  /** A model translation to run (collaboration host: `data.translationId`). */
  translationRequested: 'translation.requested.v1',
} as const;

export type RoutingKey = (typeof RoutingKeys)[keyof typeof RoutingKeys];

/** Envelope of every integration event. `id` is a UUIDv7 and the idempotency key. */
export interface EventEnvelope<TData = unknown> {
  id: string;
  /** The routing key, e.g. `file.uploaded.v1`. */
  type: string;
  version: number;
  /** ISO 8601 UTC with milliseconds. */
  occurredAt: string;
  tenantId?: string;
  workspace?: string;
  /** User id of whoever caused the event, or `system`. */
  actor: string;
  correlationId?: string;
  /** W3C `traceparent` of the work that wrote the event (distributed tracing). */
  traceparent?: string;
  data: TData;
}

/** `notification.requested.v1`: something for the notifier to deliver. */
export interface NotificationRequestedData {
  channel: 'email' | 'sms';
  to: string;
  template: string;
  subject?: string;
  text: string;
  vars?: Record<string, string>;
}

/** `file.uploaded.v1`: a file landed in storage and waits for processing. */
export interface FileUploadedData {
  fileId: string;
  revisionId: string;
  key: string;
  size: number;
  sha256: string;
  mimeType: string;
}

/** `tenant.member_removed.v1` (envelope `tenantId`: the tenant): that user's sockets there close. */
export interface TenantMemberRemovedData {
  userId: string;
}

/**
 * `collab.session_ended.v1`: session cookies a collaboration replica signed out; every replica ends
 * the event streams opened with them.
 */
export interface CollabSessionEndedData {
  /** Keys as the streams hold them: `cookie:<session id>`. */
  session_keys: string[];
}

/** `user.updated.v1`: the API host changed a user's identity fields. */
export interface UserUpdatedData {
  userId: string;
  email: string | null;
  phone: string | null;
  firstName?: string | null;
  lastName?: string | null;
  avatarUrl?: string | null;
}

/**
 * `session.revoked.v1` (DECISIONS.md section 1): sessions that ended (logout of any scope,
 * refresh-token reuse, password change, user deleted).
 */
export interface SessionRevokedData {
  session_ids: string[];
  user_id: string;
  /** Unix seconds after which no access token of these sessions can still be valid. */
  exp: number;
  /** Why they ended (additive to the decided shape). */
  reason: 'logout' | 'refresh_token_reuse' | 'password_changed' | 'user_deleted';
}

/**
 * `collab.event.v1`: an event the collaboration host appended to a workspace's event log
 * (DECISIONS.md section 7). Every replica receives it and pushes `event` to the event streams of
 * the workspace connected to it.
 */
export interface CollabEventPublishedData {
  workspaceId: string;
  /** User id of the only recipient when `event.to` is set (`lock.request`, `mention`). */
  recipientId?: string;
  event: CollabEvent;
}

/** Reads the version number out of a routing key (`file.uploaded.v1` -> 1). */
export function versionOfRoutingKey(key: string): number {
  const match = /\.v(\d+)$/.exec(key);
  if (!match) throw new Error(`routing key without version suffix: ${key}`);
  return Number(match[1]);
}
