import { DevMailboxMessageEntity } from './dev-mailbox-message.entity';
import { CreateDevMailbox1763800000100 } from './migrations/1763800000100-CreateDevMailbox';

export { DeliveryError } from './delivery-error';
export { DevMailboxMessageEntity } from './dev-mailbox-message.entity';
export type { EmailMessage, EmailSender } from './email-smtp';
export { createNotificationsModule, type NotificationsModule } from './notifications.service';
export type { SmsMessage, SmsSender } from './sms-twilio';

/** Tables of the notifier, to spread into the service's entity list. */
export const notificationEntities = [DevMailboxMessageEntity];
/** Migrations of the notifier, to spread into the service's migration list. */
export const notificationMigrations = [CreateDevMailbox1763800000100];
