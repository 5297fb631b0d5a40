import { IsIn, IsISO8601, IsString, IsUUID, Length, Matches } from 'class-validator';
import { type Page, PageOf, PageQuery } from '../common/paging';

/**
 * The WebSocket of the API host (`/ws`, DECISIONS.md section 7). A client authenticates at the
 * upgrade (the access token as a `Sec-WebSocket-Protocol` value, with `bearer` also offered, or
 * `?token=`), acts in one tenant (`?tenant=<id>`, else its default tenant) and sends JSON frames.
 */

/** Chat rooms of a tenant: lower-case letters, digits, `_` and `-`, up to 64 characters. */
export const CHAT_ROOM_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
/** `files` (processing of the tenant's files), `image-operations` (the caller's own) or `chat:<room>`. */
export const REALTIME_CHANNEL_PATTERN = /^(files|image-operations|chat:[a-z0-9][a-z0-9_-]{0,63})$/;
export const MAX_CHAT_TEXT = 4000;
/** Messages a `chat:<room>` subscription starts with (the latest, oldest first). */
export const CHAT_HISTORY_ON_SUBSCRIBE = 50;
/** Open sockets per user per process; the next one is closed with WS_CLOSE.tooManyConnections. */
export const WS_MAX_CONNECTIONS_PER_USER = 20;

/** Unread output a socket may hold; past it the socket is closed with WS_CLOSE.tooSlow. */
export const WS_MAX_BUFFERED_BYTES = 1024 * 1024;

/** Subscribe frames one socket may send a minute; past it the socket is closed (WS_CLOSE.tooManySubscribes). */
export const WS_SUBSCRIBES_PER_MINUTE = 120;

/** Close codes the server uses (4000-4999 are the application's). */
export const WS_CLOSE = {
  /** The access token's session ended (logout, revocation). */
  sessionEnded: 4001,
  /** The user is no longer a member of the socket's tenant. */
  notMember: 4003,
  /** More than WS_MAX_CONNECTIONS_PER_USER sockets of one user. */
  tooManyConnections: 4008,
  /** No pong to the last ping. */
  unresponsive: 4010,
  /** The client does not read what it is sent (more than WS_MAX_BUFFERED_BYTES unread). */
  tooSlow: 4011,
  /** More subscribe frames than WS_SUBSCRIBES_PER_MINUTE. */
  tooManySubscribes: 4029,
  /** The server is shutting down; reconnect. */
  goingAway: 1001,
} as const;

/** `{ type: 'subscribe' | 'unsubscribe', channel }`. */
export class ChannelFrame {
  @IsIn(['subscribe', 'unsubscribe'])
  type: 'subscribe' | 'unsubscribe';

  @IsString()
  @Matches(REALTIME_CHANNEL_PATTERN, { message: 'channel must be files, image-operations or chat:<room>' })
  channel: string;
}

/** `{ type: 'chat.send', room, text }`: stored, then sent to every subscriber of `chat:<room>`. */
export class ChatSendFrame {
  @IsIn(['chat.send'])
  type: 'chat.send';

  @IsString()
  @Matches(CHAT_ROOM_PATTERN, { message: 'room must be 1-64 lower-case letters, digits, _ or -' })
  room: string;

  @IsString()
  @Length(1, MAX_CHAT_TEXT)
  text: string;
}

/** A stored chat message (server frame `chat.message`, and the history route's items). */
export class ChatMessage {
  @IsUUID()
  id: string;

  @IsString()
  room: string;

  /** The sender's user id. */
  @IsUUID()
  userId: string;

  @IsString()
  text: string;

  @IsISO8601()
  createdAt: string;
}

/** `GET /chat/rooms/{room}/messages`: newest first. */
export class ChatHistoryQuery extends PageQuery {}

export const ChatMessageList = PageOf(ChatMessage, 'ChatMessageList');
export type ChatMessageList = Page<ChatMessage>;

/** `chat.message.v1`: a chat message of a tenant was stored. */
export interface ChatMessageData {
  message: ChatMessage;
}
