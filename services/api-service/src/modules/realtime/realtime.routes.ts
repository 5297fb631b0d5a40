import { CHAT_ROOM_PATTERN, ChatHistoryQuery, ChatMessageList, ErrorBodyDto } from '@hwp/contracts';
import { type ApiRouter, AppError, NotFoundError } from '@hwp/platform';
import type { RequestHandler } from 'express';
import { requestTenant } from '../tenancy/tenant-context';
import type { ChatService } from './chat.service';

const WS_DESCRIPTION = `The WebSocket of the API host (DECISIONS.md section 7). Open it with an upgrade request:
the access token as a \`Sec-WebSocket-Protocol\` value (offer \`bearer\` too; the server selects it) or as \`?token=\`,
and \`?tenant=<id>\` to act in another tenant than the default one. A refused handshake answers 401, 403 or 429 with
the error body. A plain GET (no upgrade) answers 426.

Client frames (JSON text): \`{type:'subscribe'|'unsubscribe', channel}\` with channel \`files\` (processing of the
tenant's files), \`image-operations\` (the caller's image operations) or \`chat:<room>\`; \`{type:'chat.send', room, text}\` (1-4000 characters, 60 a minute).

Server frames: \`{type:'ready', tenantId, userId}\`, \`{type:'subscribed'|'unsubscribed', channel}\`,
\`{type:'event', channel:'files', event:'file.processed.v1', data}\`,
\`{type:'event', channel:'image-operations', operation}\` (each state of the caller's operations), \`{type:'chat.history', room, messages}\`
(the latest 50, oldest first, right after subscribing to a room), \`{type:'chat.message', message}\`,
\`{type:'error', code, detail, errors?}\` (the socket stays open).

At most 20 sockets per user per server process: the next is closed with code 4008. The server pings every 30 s
(WS_PING_INTERVAL_MS) and checks the tenant membership again (4003 once it ended);
a socket without a pong is closed (4010). A socket whose session ends (logout, revocation) is closed (4001).`;

/** `GET /ws` (the upgrade itself is taken before routing) and the chat history. */
export function mountRealtimeRoutes(api: ApiRouter, chat: ChatService, signedIn: RequestHandler[]): void {
  api.route({
    method: 'get',
    path: '/ws',
    summary: 'WebSocket: file processing events and tenant chat rooms',
    description: WS_DESCRIPTION,
    tags: ['realtime'],
    security: ['bearerAuth'],
    responses: {
      101: { description: 'Switching protocols: the socket is open' },
      426: { description: 'Not an upgrade request', schema: ErrorBodyDto },
    },
    handler: () => {
      throw new AppError('upgrade_required', 'Open /ws with a WebSocket upgrade request', {
        headers: { Upgrade: 'websocket', Connection: 'Upgrade' },
      });
    },
  });
  api.route({
    method: 'get',
    path: '/chat/rooms/:room/messages',
    summary: 'The messages of a chat room of the tenant, newest first',
    tags: ['realtime'],
    security: ['bearerAuth'],
    before: signedIn,
    rateLimited: true,
    query: ChatHistoryQuery,
    responses: {
      200: { description: 'A page of messages', schema: ChatMessageList },
      404: { description: 'Not a room name', schema: ErrorBodyDto },
    },
    handler: ({ params, query, req }) => {
      if (!CHAT_ROOM_PATTERN.test(params.room)) throw new NotFoundError('No such room');
      return chat.history(requestTenant(req).scope, params.room, query.page, query.pageSize);
    },
  });
}
