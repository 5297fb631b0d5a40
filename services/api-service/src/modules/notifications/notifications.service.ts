import { type NotificationRequestedData, RoutingKeys } from '@hwp/contracts';
import { type ApiRouter, currentContext, type PlatformDeps } from '@hwp/platform';
import type { EntityManager } from 'typeorm';
import type { ApiConfig } from '../../config';
import { createDevMailboxRepository } from './dev-mailbox.repository';
import { createSmtpEmailSender, type EmailSender } from './email-smtp';
import { createNotificationHandler, notificationProblems } from './notifications.consumer';
import { mountDevMailboxRoutes } from './notifications.routes';
import { createTwilioSmsSender, type SmsSender } from './sms-twilio';

export interface NotificationsModule {
  /**
   * Asks for an email or SMS: adds `notification.requested.v1` to the outbox inside the caller's
   * transaction, so it goes out only if that transaction commits. Throws on a malformed payload.
   */
  request(manager: EntityManager, data: NotificationRequestedData, actor: string): Promise<void>;
  /** `GET /dev/mailbox`, outside production only (absent, hence 404, in production). */
  mount(api: ApiRouter): void;
  /** Starts the notifier: the consumer that sends by SMTP / SMS or keeps messages in the dev mailbox. */
  registerConsumer(): Promise<void>;
}

// The handler holds a database connection while it talks to the provider: keep the share of the
// pool it can take small.
const NOTIFIER_PREFETCH = 4;

/**
 * Notifications of the API host. Cheap to build: the SMTP transporter and the SMS client exist only
 * once registerConsumer() runs, so the instances that only request or mount hold no resources.
 */
export function createNotificationsModule(deps: PlatformDeps<ApiConfig>): NotificationsModule {
  const { config, bus, logger } = deps;
  const production = config.NODE_ENV === 'production';
  const mailbox = createDevMailboxRepository(deps.dataSource);

  async function request(
    manager: EntityManager,
    data: NotificationRequestedData,
    actor: string,
  ): Promise<void> {
    const problems = notificationProblems(data);
    // A caller bug: fail its transaction now rather than dead-letter the event later.
    if (problems.length > 0) throw new Error(`Invalid notification request: ${problems.join('; ')}`);
    await bus.outbox.add(manager, {
      type: RoutingKeys.notificationRequested,
      actor,
      correlationId: currentContext()?.requestId,
      data,
    });
  }

  function mount(api: ApiRouter): void {
    if (production) return;
    mountDevMailboxRoutes(api, mailbox);
  }

  function emailSender(): EmailSender | null {
    if (!config.SMTP_URL) return null;
    const sender = createSmtpEmailSender({ url: config.SMTP_URL, from: config.SMTP_FROM });
    deps.lifecycle.onShutdown('smtp', () => sender.close());
    return sender;
  }

  function smsSender(): SmsSender | null {
    const { TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, TWILIO_FROM, TWILIO_API_URL } = config;
    // loadApiConfig only accepts the three together.
    if (!TWILIO_ACCOUNT_SID || !TWILIO_AUTH_TOKEN || !TWILIO_FROM) return null;
    return createTwilioSmsSender({
      accountSid: TWILIO_ACCOUNT_SID,
      authToken: TWILIO_AUTH_TOKEN,
      from: TWILIO_FROM,
      apiUrl: TWILIO_API_URL,
    });
  }

  async function registerConsumer(): Promise<void> {
    const email = emailSender();
    const sms = smsSender();
    logger.info(
      {
        email: email ? 'smtp' : production ? 'none' : 'dev-mailbox',
        sms: sms ? 'twilio' : production ? 'none' : 'dev-mailbox',
      },
      'notifier transports',
    );
    await bus.subscribe(
      { consumer: 'notifier', patterns: [RoutingKeys.notificationRequested], prefetch: NOTIFIER_PREFETCH },
      createNotificationHandler({ email, sms, mailbox, devMailbox: !production, logger }),
    );
  }

  return { request, mount, registerConsumer };
}
