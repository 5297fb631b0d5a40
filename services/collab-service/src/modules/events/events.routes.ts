import { ErrorBodyDto, EventsQuery } from '@hwp/contracts';
import type { Logger } from '@hwp/platform';
import { AppError, ForbiddenError, type Lifecycle } from '@hwp/platform';
import type { Request } from 'express';
import type { CollabConfig } from '../../config';
import { fromQuery } from '../workspace-access/workspace-access';
import { type CollabRoute, memberRoute } from '../workspace-access/workspace-route';
import type { EventHub } from './event-hub';
import { openEventStream } from './event-stream';
import type { PresenceService } from './presence.service';

export interface EventRouteDeps {
  hub: EventHub;
  presence: PresenceService;
  config: Pick<CollabConfig, 'SSE_RETRY_MS' | 'SSE_MAX_CONNECTIONS_PER_USER'>;
  lifecycle: Lifecycle;
  logger: Logger;
}

const EVENT_ID = /^\d{1,15}$/;

/** `Last-Event-ID` (sent by EventSource on reconnects) wins over the `lastEventId` query parameter. */
function lastEventIdOf(req: Request, query: EventsQuery): number | null {
  const header = req.get('last-event-id')?.trim();
  if (header && EVENT_ID.test(header)) return Number(header);
  return query.lastEventId !== undefined ? Number(query.lastEventId) : null;
}

const DESCRIPTION = `Server-Sent Events of the workspace (DECISIONS.md section 7). Each message:
\`id: <monotonic per workspace>\`, \`event: <type>\`, \`data: {id, type, workspace, actor, at, path?, to?, data}\`.

- The stream starts with \`retry: <ms>\`. It is never silent for more than about 13 s (7/8 of
  SSE_HEARTBEAT_MS): a stream without events gets a comment line (\`: heartbeat\`) within 13.1 s of
  its last message, then every 11.25 s (3/4 of it).
- Replay: send the last id you received as the \`Last-Event-ID\` header (EventSource does so on
  reconnect) or, for clients that cannot set headers, as the \`lastEventId\` query parameter (the
  header wins). You get exactly the events after it, in order, without duplicates, then the live
  ones. Events are kept 24 hours.
- \`presence\` events (\`data: {username, online}\`) announce a user's first stream of the workspace
  (on any replica) and their last one closing.
- Events addressed to one user (\`to\` set: \`lock.request\`, \`mention\`) reach only that user's streams.
- At most SSE_MAX_CONNECTIONS_PER_USER open streams per user per server process (429 beyond).`;

/** `GET /v1/events` (section 6). */
export function streamEvents(deps: EventRouteDeps): CollabRoute {
  const { hub, presence, config, lifecycle, logger } = deps;
  const cap = config.SSE_MAX_CONNECTIONS_PER_USER;

  return memberRoute({
    method: 'get',
    path: '/v1/events',
    summary: 'Event stream of a workspace (Server-Sent Events)',
    description: DESCRIPTION,
    tags: ['events'],
    role: 'viewer',
    workspace: fromQuery('workspace'),
    query: EventsQuery,
    rateLimited: true,
    responses: {
      200: {
        description: 'The stream (text/event-stream), open until the client leaves',
        contentType: 'text/event-stream',
        schema: { type: 'string' },
      },
      403: { description: '`username` names another user', schema: ErrorBodyDto },
    },
    handler: async ({ query, user, workspace: access, req, res }) => {
      if (query.username !== undefined && query.username.toLowerCase() !== user.username) {
        throw new ForbiddenError('username must be your own');
      }
      const after = await hub.startingPoint(access.id, lastEventIdOf(req, query));
      if (hub.connectionsOf(user.id) >= cap) {
        throw new AppError('rate_limited', `At most ${cap} open event streams per user`, {
          headers: {
            'Retry-After': '5',
            'RateLimit-Policy': `"event-streams"; q=${cap}`,
            RateLimit: '"event-streams"; r=0',
          },
        });
      }

      // From here on the response is the stream: errors end it instead of answering JSON.
      const sink = openEventStream(req, res, config.SSE_RETRY_MS);
      const client = hub.open({
        workspaceId: access.id,
        userId: user.id,
        sessionKeys: req.sessionKeys,
        sink,
        after,
      });
      presence.opened(access, user);
      const untrack = lifecycle.trackStream(() => sink.close());
      let ended = false;
      const end = () => {
        if (ended) return;
        ended = true;
        untrack();
        hub.close(client);
        presence.closed(access, user);
      };
      res.on('close', end);
      // The client may have left while the role check ran; 'close' has been emitted then.
      if (req.socket.destroyed) end();
      try {
        await hub.start(client);
      } catch (error) {
        logger.warn({ err: error, workspace: access.name }, 'event stream replay failed; closing it');
        sink.close();
      }
    },
  });
}
