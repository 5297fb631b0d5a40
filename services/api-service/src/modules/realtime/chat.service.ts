import {
  type ChatMessage,
  type ChatMessageData,
  type ChatMessageList,
  DEFAULT_PAGE_SIZE,
  RoutingKeys,
} from '@hwp/contracts';
import { type Bus, newId } from '@hwp/platform';
import type { TenantScope } from '../tenancy/tenant-scope';
import { ChatMessageEntity } from './chat-message.entity';

export function presentMessage(row: ChatMessageEntity): ChatMessage {
  return {
    id: row.id,
    room: row.room,
    userId: row.userId,
    text: row.text,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The chat rooms of a tenant: messages stored with their `chat.message.v1` event, and history. */
export class ChatService {
  constructor(private readonly bus: Bus) {}

  /** Stores the message and publishes it (after commit) to every replica's subscribers of the room. */
  async send(scope: TenantScope, userId: string, room: string, text: string): Promise<ChatMessage> {
    return this.bus.transaction(async (manager) => {
      const row = await scope.in(manager).repo(ChatMessageEntity).insert({
        id: newId(),
        room,
        userId,
        text,
        createdAt: new Date(),
      });
      const message = presentMessage(row);
      await this.bus.outbox.add<ChatMessageData>(manager, {
        type: RoutingKeys.chatMessage,
        tenantId: scope.tenantId,
        actor: userId,
        data: { message },
      });
      return message;
    });
  }

  /** A page of the room's messages, newest first. */
  async history(
    scope: TenantScope,
    room: string,
    page = 1,
    pageSize = DEFAULT_PAGE_SIZE,
  ): Promise<ChatMessageList> {
    const [rows, total] = await scope.repo(ChatMessageEntity).findAndCount({
      where: { room },
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: (page - 1) * pageSize,
      take: pageSize,
    });
    return { items: rows.map(presentMessage), total, page, pageSize };
  }
}
