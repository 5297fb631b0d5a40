import { E164_PATTERN, type NotificationRequestedData } from '@hwp/contracts';
import type { EventHandler, PlatformDeps } from '@hwp/platform';
import { DeliveryError } from './delivery-error';
import type { DevMailboxRepository } from './dev-mailbox.repository';
import type { EmailSender } from './email-smtp';
import type { SmsSender } from './sms-twilio';

// One plain address: no display name, no list, nothing nodemailer would parse into a second recipient.
const EMAIL_PATTERN = /^[^\s@,;:<>()[\]"\\]+@[^\s@,;:<>()[\]"\\]+$/;
const MAX_EMAIL_LENGTH = 254;
const MAX_TEMPLATE_LENGTH = 200;
// RFC 5322 line limit; a subject is one header line.
const MAX_SUBJECT_LENGTH = 998;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every problem of a `notification.requested.v1` payload; empty when it is well formed. */
export function notificationProblems(data: unknown): string[] {
  if (!isRecord(data)) return ['payload is not an object'];
  const problems: string[] = [];
  const { channel, to, template, subject, text, vars } = data;
  if (channel !== 'email' && channel !== 'sms') problems.push("channel must be 'email' or 'sms'");
  if (typeof to !== 'string') problems.push('to must be a string');
  else if (channel === 'email' && (to.length > MAX_EMAIL_LENGTH || !EMAIL_PATTERN.test(to)))
    problems.push('to must be one email address');
  else if (channel === 'sms' && !E164_PATTERN.test(to)) problems.push('to must be an E.164 phone number');
  if (typeof template !== 'string' || template.length === 0 || template.length > MAX_TEMPLATE_LENGTH)
    problems.push('template must be a non-empty string');
  if (subject !== undefined && subject !== null) {
    if (typeof subject !== 'string' || subject.length > MAX_SUBJECT_LENGTH || /[\r\n]/.test(subject))
      problems.push('subject must be one line of text');
  }
  if (typeof text !== 'string' || text.length === 0) problems.push('text must be a non-empty string');
  if (vars !== undefined && (!isRecord(vars) || Object.values(vars).some((v) => typeof v !== 'string')))
    problems.push('vars must map names to strings');
  return problems;
}

/** Validates a payload off the bus; a malformed one fails for good (retrying cannot fix it). */
export function parseNotificationRequest(data: unknown): NotificationRequestedData {
  const problems = notificationProblems(data);
  if (problems.length > 0) {
    throw DeliveryError.permanent(`malformed notification.requested.v1: ${problems.join('; ')}`);
  }
  const payload = data as NotificationRequestedData & { subject?: string | null };
  return { ...payload, subject: payload.subject ?? undefined };
}

/**
 * The form recipients are stored and looked up in: email addresses lowercased, phone numbers as
 * bare E.164. A `+` sent unencoded in a query string arrives as a space, so a leading space before
 * a digit is read back as `+`.
 */
export function normalizeRecipient(to: string): string {
  if (to.includes('@')) return to.trim().toLowerCase();
  return to.replace(/^ (?=\d)/, '+').replace(/[\s().-]/g, '');
}

export interface NotifierOptions {
  /** SMTP, when SMTP_URL is set. */
  email: EmailSender | null;
  /** Twilio, when TWILIO_* are set. */
  sms: SmsSender | null;
  mailbox: DevMailboxRepository;
  /** Keep what no transport can send in the dev mailbox (never in production). */
  devMailbox: boolean;
  logger: PlatformDeps['logger'];
}

/**
 * Delivers one `notification.requested.v1`. It runs inside the inbox transaction, so a redelivered
 * event is skipped; the provider call is the last step, and a failure rolls the inbox row back so
 * the bus retries. A crash between the provider's accept and the commit sends the message twice:
 * delivery is at least once.
 */
export function createNotificationHandler(options: NotifierOptions): EventHandler {
  const { email, sms, mailbox, logger } = options;
  return async (event, manager) => {
    const data = parseNotificationRequest(event.data);
    // Never the recipient or the text: one is personal data, the other may hold a one-time code.
    const log = {
      eventId: event.id,
      correlationId: event.correlationId,
      channel: data.channel,
      template: data.template,
    };

    if (data.channel === 'email' && email) {
      const { providerId } = await email.send({
        to: data.to,
        subject: data.subject ?? data.template,
        text: data.text,
      });
      logger.info({ ...log, providerId }, 'notification sent by SMTP');
      return;
    }
    if (data.channel === 'sms' && sms) {
      const { providerId } = await sms.send({ to: data.to, body: data.text });
      if (providerId === null) logger.warn(log, 'Twilio accepted the SMS without naming a message sid');
      logger.info({ ...log, providerId }, 'notification sent by SMS');
      return;
    }
    if (!options.devMailbox) {
      // Retrying cannot help: only a configuration change can deliver this channel.
      logger.error(log, `no ${data.channel} transport is configured; notification dropped`);
      return;
    }
    await mailbox.insert(manager, {
      eventId: event.id,
      channel: data.channel,
      recipient: normalizeRecipient(data.to),
      template: data.template,
      subject: data.subject ?? null,
      body: data.text,
    });
    logger.info(log, 'notification kept in the dev mailbox');
  };
}
