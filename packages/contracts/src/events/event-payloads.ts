import type { SystemProbeData } from '../common/ops';
import {
  FILE_CLASSIFICATIONS,
  type FileClassification,
  PROCESSING_STATUSES,
  type ProcessingStatus,
} from '../files/files.dto';
import { IMAGE_OPERATION_STATUSES, IMAGE_TOOLS, type ImageOperationUpdatedData } from '../images/images.dto';
import type { CollabEvent } from './collab-events';
import {
  type CollabEventPublishedData,
  type CollabSessionEndedData,
  type EventEnvelope,
  type FileUploadedData,
  type NotificationRequestedData,
  type RoutingKey,
  RoutingKeys,
  type SessionRevokedData,
  type TenantMemberRemovedData,
  type UserUpdatedData,
} from './events';
import type { ChatMessageData } from './realtime';

/** `file.processed.v1`: the processing pipeline finished a file revision (any outcome). */
export interface FileProcessedData {
  fileId: string;
  revisionId: string;
  status: ProcessingStatus;
  classification: FileClassification | null;
}

/** `translation.requested.v1`: a model translation to run (collaboration host). */
export interface TranslationRequestedData {
  translationId: string;
}

/** The payload (`data`) of each routing key: one map, so a consumer's handler knows what it gets. */
export interface EventPayloads {
  'file.uploaded.v1': FileUploadedData;
  'file.processed.v1': FileProcessedData;
  'chat.message.v1': ChatMessageData;
  'image.operation.updated.v1': ImageOperationUpdatedData;
  'notification.requested.v1': NotificationRequestedData;
  'user.updated.v1': UserUpdatedData;
  'session.revoked.v1': SessionRevokedData;
  'tenant.member_removed.v1': TenantMemberRemovedData;
  'collab.session_ended.v1': CollabSessionEndedData;
  'collab.event.v1': CollabEventPublishedData;
  'system.probe.v1': SystemProbeData;
  'translation.requested.v1': TranslationRequestedData;
}

/** An envelope of one of `K`, its `data` typed by its `type` (a union narrows on `type`). */
export type EventOf<K extends RoutingKey> = K extends RoutingKey
  ? EventEnvelope<EventPayloads[K]> & { type: K }
  : never;

type Check = (value: unknown) => boolean;
type Shape = Record<string, Check>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text: Check = (v) => typeof v === 'string';
const finite: Check = (v) => typeof v === 'number' && Number.isFinite(v);
const optional =
  (check: Check): Check =>
  (v) =>
    v === undefined || check(v);
const nullable =
  (check: Check): Check =>
  (v) =>
    v === null || check(v);
const oneOf =
  (values: readonly unknown[]): Check =>
  (v) =>
    values.includes(v);
const listOf =
  (check: Check): Check =>
  (v) =>
    Array.isArray(v) && v.every(check);
const recordOf =
  (check: Check): Check =>
  (v) =>
    isObject(v) && Object.values(v).every(check);
/** An object with at least these fields (more are fine: payloads grow by adding fields). */
const shape =
  (fields: Shape): Check =>
  (v) =>
    isObject(v) && Object.entries(fields).every(([name, check]) => check(v[name]));

const collabEvent: Check = shape({
  id: finite,
  type: text,
  workspace: text,
  actor: text,
  at: text,
  data: (v) => isObject(v),
} satisfies Partial<Record<keyof CollabEvent, Check>>);

/** The fields each payload's consumers rely on, checked at the consumer's edge (see `checkEvent`). */
const PAYLOAD_SHAPES: { [K in RoutingKey]: Shape } = {
  [RoutingKeys.fileUploaded]: {
    fileId: text,
    revisionId: text,
    key: text,
    size: finite,
    sha256: text,
    mimeType: text,
  },
  [RoutingKeys.fileProcessed]: {
    fileId: text,
    revisionId: text,
    status: oneOf(PROCESSING_STATUSES),
    classification: nullable(oneOf(FILE_CLASSIFICATIONS)),
  },
  [RoutingKeys.chatMessage]: {
    message: shape({ id: text, room: text, userId: text, text: text, createdAt: text }),
  },
  [RoutingKeys.imageOperationUpdated]: {
    userId: text,
    operation: shape({ id: text, tool: oneOf(IMAGE_TOOLS), status: oneOf(IMAGE_OPERATION_STATUSES) }),
  },
  [RoutingKeys.notificationRequested]: {
    channel: oneOf(['email', 'sms']),
    to: text,
    template: text,
    subject: optional(text),
    text: text,
    vars: optional(recordOf(text)),
  },
  [RoutingKeys.userUpdated]: {
    userId: text,
    email: nullable(text),
    phone: nullable(text),
    firstName: optional(nullable(text)),
    lastName: optional(nullable(text)),
    avatarUrl: optional(nullable(text)),
  },
  [RoutingKeys.sessionRevoked]: {
    session_ids: listOf(text),
    user_id: text,
    exp: finite,
    reason: text,
  },
  [RoutingKeys.tenantMemberRemoved]: { userId: text },
  [RoutingKeys.collabSessionEnded]: { session_keys: listOf(text) },
  [RoutingKeys.collabEvent]: { workspaceId: text, recipientId: optional(text), event: collabEvent },
  [RoutingKeys.systemProbe]: { probeId: text, origin: text, note: text, sentAt: text },
  [RoutingKeys.translationRequested]: { translationId: text },
};

/**
 * Why an envelope is not an event of `keys` with the payload its type promises (null when it is):
 * another type, or a payload missing a field or with a field of the wrong kind (the first named).
 */
export function eventProblem(envelope: EventEnvelope, keys: readonly RoutingKey[]): string | null {
  const type = envelope.type as RoutingKey;
  if (!keys.includes(type)) return `type ${envelope.type} is not one of ${keys.join(', ')}`;
  if (!isObject(envelope.data)) return `${type}: data is not an object`;
  const data = envelope.data;
  for (const [name, check] of Object.entries(PAYLOAD_SHAPES[type])) {
    if (!check(data[name])) return `${type}: data.${name} is missing or of the wrong kind`;
  }
  return null;
}

/** Narrows an envelope to an event of `keys` when `eventProblem` finds nothing. */
export function isEventOf<K extends RoutingKey>(
  envelope: EventEnvelope,
  keys: readonly K[],
): envelope is EventOf<K> {
  return eventProblem(envelope, keys) === null;
}
