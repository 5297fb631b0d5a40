import { newId } from '@hwp/platform';
import type { DataSource, EntityManager } from 'typeorm';
import { DevMailboxMessageEntity } from './dev-mailbox-message.entity';

export interface NewDevMailboxMessage {
  eventId: string;
  channel: 'email' | 'sms';
  recipient: string;
  template: string;
  subject: string | null;
  body: string;
}

/** Storage of the dev mailbox. */
export function createDevMailboxRepository(dataSource: DataSource) {
  return {
    /** Inside the caller's transaction; a second row for the same event is ignored. */
    async insert(manager: EntityManager, message: NewDevMailboxMessage): Promise<void> {
      await manager
        .createQueryBuilder()
        .insert()
        .into(DevMailboxMessageEntity)
        .values({ id: newId(), ...message })
        .orIgnore()
        .execute();
    },

    /** One recipient's messages, newest first. */
    findForRecipient(
      recipient: string,
      page: number,
      pageSize: number,
    ): Promise<[DevMailboxMessageEntity[], number]> {
      return dataSource.getRepository(DevMailboxMessageEntity).findAndCount({
        where: { recipient },
        order: { createdAt: 'DESC', id: 'DESC' },
        skip: (page - 1) * pageSize,
        take: pageSize,
      });
    },
  };
}

export type DevMailboxRepository = ReturnType<typeof createDevMailboxRepository>;
