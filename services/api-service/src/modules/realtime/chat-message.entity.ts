import { Column, Entity, PrimaryColumn } from 'typeorm';
import { registerTenantOwned } from '../tenancy/tenant-scope';

/** A message of a tenant's chat room (WebSocket `chat.send`), kept as the room's history. */
@Entity({ name: 'chat_messages' })
export class ChatMessageEntity {
  @PrimaryColumn('uuid')
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column('text')
  room: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column('text')
  text: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

registerTenantOwned(ChatMessageEntity);
