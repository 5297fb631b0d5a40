import { IsNotEmpty, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** SSE event types (section 6 and DECISIONS.md section 7). */
export const COLLAB_EVENT_TYPES = [
  'update',
  'version',
  'presence',
  'comment',
  'lock',
  'unlock',
  'task',
  'review',
  'bom',
  'part',
  'import.progress',
  'translation',
  'conflict',
  'lock.request',
  'mention',
] as const;
export type CollabEventType = (typeof COLLAB_EVENT_TYPES)[number];

/** `data:` of one SSE message (DECISIONS.md section 7); `id` is monotonic per workspace. */
export interface CollabEvent<TData = Record<string, unknown>> {
  id: number;
  type: CollabEventType;
  workspace: string;
  /** Username of whoever caused it, or `system`. */
  actor: string;
  at: string;
  path?: string;
  /** Set for events meant for one user only (`lock.request`, `mention`). */
  to?: string;
  data: TData;
}

/** `GET /v1/events?workspace&username`. */
export class EventsQuery {
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  workspace: string;

  /** When given, must be the caller's username. */
  @IsOptional()
  @IsString()
  @MaxLength(64)
  username?: string;

  /**
   * Replays the events after this id, for clients that cannot set the `Last-Event-ID` header on the
   * first connection; the header wins when both are sent (EventSource sends it on reconnects).
   */
  @IsOptional()
  @Matches(/^\d{1,15}$/, { message: 'lastEventId must be an event id (digits)' })
  lastEventId?: string;
}
