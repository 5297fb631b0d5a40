import type { NodemailerError } from 'nodemailer';
import { DeliveryError } from './delivery-error';

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Port of the mail provider. */
export interface EmailSender {
  /** Resolves once the server accepted the message, with its message id. */
  send(message: EmailMessage): Promise<{ providerId: string | null }>;
  /** Closes pooled connections (a no-op for one connection per message). */
  close(): void;
}

export interface SmtpEmailOptions {
  /** `smtp(s)://user:pass@host:port`; nodemailer options can ride along as query parameters (`?pool=true`). */
  url: string;
  from: string;
  /** Limit of one send, connecting included (default 15 s). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 15_000;

/** Errors without an SMTP reply that no retry cures: missing credentials or a bad configuration. */
const PERMANENT_CODES = new Set(['EAUTH', 'ENOAUTH', 'ECONFIG']);

/** Sends email by SMTP through one nodemailer transporter. */
export function createSmtpEmailSender(options: SmtpEmailOptions): EmailSender {
  // nodemailer is some 40 modules (0.7 MB): loaded only by a host that sends email by SMTP.
  const { createTransport } = require('nodemailer') as typeof import('nodemailer');
  const transporter = createTransport(options.url);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  return {
    async send(message) {
      try {
        const info = await transporter.sendMail({
          from: options.from,
          // An address object, never parsed: a recipient string cannot smuggle in a second address.
          to: { name: '', address: message.to },
          subject: message.subject,
          text: message.text,
          signal: AbortSignal.timeout(timeoutMs),
        });
        return { providerId: typeof info.messageId === 'string' ? info.messageId : null };
      } catch (error) {
        const e = error as NodemailerError;
        // nodemailer sets `permanent` whenever the server replied (5xx other than 503 is permanent).
        const permanent = e.permanent ?? (e.code !== undefined && PERMANENT_CODES.has(e.code));
        throw new DeliveryError(`SMTP delivery failed: ${e.message}`, !permanent, { cause: error });
      }
    },
    close() {
      transporter.close();
    },
  };
}
