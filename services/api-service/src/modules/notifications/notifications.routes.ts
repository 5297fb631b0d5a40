import { DEFAULT_PAGE_SIZE, DevMailboxList, type DevMailboxMessage, DevMailboxQuery } from '@hwp/contracts';
import type { ApiRouter } from '@hwp/platform';
import type { DevMailboxRepository } from './dev-mailbox.repository';
import type { DevMailboxMessageEntity } from './dev-mailbox-message.entity';
import { normalizeRecipient } from './notifications.consumer';

function present(row: DevMailboxMessageEntity): DevMailboxMessage {
  return {
    id: row.id,
    event_id: row.eventId,
    channel: row.channel,
    to: row.recipient,
    template: row.template,
    subject: row.subject,
    text: row.body,
    created_at: row.createdAt.toISOString(),
  };
}

/** `GET /dev/mailbox?to=`; the caller mounts it only outside production. */
export function mountDevMailboxRoutes(api: ApiRouter, mailbox: DevMailboxRepository): void {
  api.route({
    method: 'get',
    path: '/dev/mailbox',
    summary: 'Notifications kept instead of sent, for one recipient, newest first (development only)',
    description:
      'Exists only when NODE_ENV is not production and holds what no configured transport (SMTP, SMS) ' +
      'could send. Email addresses compare case-insensitively; phone numbers are E.164.',
    tags: ['development'],
    query: DevMailboxQuery,
    responses: { 200: { description: 'A page of messages', schema: DevMailboxList } },
    handler: async ({ query, res }) => {
      const page = query.page ?? 1;
      const pageSize = query.pageSize ?? DEFAULT_PAGE_SIZE;
      const [rows, total] = await mailbox.findForRecipient(normalizeRecipient(query.to), page, pageSize);
      // The messages carry one-time codes.
      res.set('Cache-Control', 'no-store');
      return { items: rows.map(present), total, page, pageSize } satisfies DevMailboxList;
    },
  });
}
