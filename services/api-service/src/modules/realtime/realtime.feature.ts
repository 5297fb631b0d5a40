import { RoutingKeys } from '@hwp/contracts';
import { defineFeature, onUpgrade } from '@hwp/platform';
import type { ApiConfig } from '../../config';
import type { AuthModule } from '../auth/auth.module';
import type { FilesExports } from '../files/files.feature';
import type { TenancyExports } from '../tenancy/tenancy.feature';
import { createTenantResolver } from '../tenancy/tenant-context';
import { ChatService } from './chat.service';
import { ChatMessageEntity } from './chat-message.entity';
import { CreateChatMessages1764600000000 } from './migrations/1764600000000-CreateChatMessages';
import { mountRealtimeRoutes } from './realtime.routes';
import { RealtimeGateway } from './realtime-gateway';

export interface RealtimeExports {
  gateway: RealtimeGateway;
  chat: ChatService;
}

/** The WebSocket `/ws` (file processing events, tenant chat rooms) and the chat history route. */
export const realtimeFeature = defineFeature<
  ApiConfig,
  RealtimeExports,
  { tenancy: TenancyExports; auth: AuthModule; files: FilesExports }
>({
  name: 'realtime',
  entities: [ChatMessageEntity],
  migrations: [CreateChatMessages1764600000000],
  build: (deps, { tenancy, auth, files }) => {
    const { dataSource, bus, logger, lifecycle, config } = deps;
    const chat = new ChatService(bus);
    const signedIn = [
      auth.authenticate,
      auth.standardLimit,
      createTenantResolver(dataSource, tenancy.tenants),
    ];
    const gateway = new RealtimeGateway({
      signIn: signedIn,
      chat,
      logger,
      pingIntervalMs: config.WS_PING_INTERVAL_MS,
      memberships: (pairs) => tenancy.tenants.memberships(dataSource.manager, pairs),
    });
    lifecycle.onShutdown('websockets', () => gateway.close());
    // Every replica hands what the broker brings to the sockets connected to it.
    const consumers = () =>
      bus.subscribeTo(
        {
          consumer: 'realtime',
          keys: [
            RoutingKeys.fileProcessed,
            RoutingKeys.imageOperationUpdated,
            RoutingKeys.chatMessage,
            RoutingKeys.sessionRevoked,
            RoutingKeys.tenantMemberRemoved,
          ],
          broadcast: true,
          prefetch: 50,
        },
        async (event) => {
          const { tenantId } = event;
          if (event.type === RoutingKeys.sessionRevoked) {
            gateway.sessionsEnded(event.data.session_ids);
          } else if (!tenantId) {
            return;
          } else if (event.type === RoutingKeys.tenantMemberRemoved) {
            gateway.membershipEnded(tenantId, event.data.userId);
          } else if (event.type === RoutingKeys.fileProcessed) {
            await gateway.fileEvent(tenantId, event.type, event.data, (tenant, readers) =>
              files.files.viewersAmong(tenant, event.data.fileId, readers),
            );
          } else if (event.type === RoutingKeys.imageOperationUpdated) {
            gateway.imageOperation(tenantId, event.data.userId, event.data.operation);
          } else if (event.type === RoutingKeys.chatMessage) {
            gateway.chatMessage(tenantId, event.data.message);
          }
        },
      );
    return {
      routes: [
        (api, app) => {
          onUpgrade(app, '/ws', (req, socket, head) => {
            void gateway.upgrade(req, socket, head);
          });
          mountRealtimeRoutes(api, chat, signedIn);
        },
      ],
      consumers,
      exports: { gateway, chat },
    };
  },
});
