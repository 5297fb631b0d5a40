import { DeliveryError } from './delivery-error';

export interface SmsMessage {
  /** E.164 number. */
  to: string;
  body: string;
}

/** Port of the SMS provider. */
export interface SmsSender {
  /** Resolves once the provider accepted the message, with its message id when it named one. */
  send(message: SmsMessage): Promise<{ providerId: string | null }>;
}

export interface TwilioSmsOptions {
  accountSid: string;
  authToken: string;
  /** Sender number, or a Messaging Service SID (`MG...`). */
  from: string;
  /** `https://api.twilio.com`, or a stand-in speaking the same protocol. */
  apiUrl: string;
  /** Per-request limit (default 10 s). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** Twilio's error body: `{ code, message, more_info, status }`. */
function describeTwilioError(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { code?: unknown; message?: unknown };
    if (typeof parsed.message === 'string') {
      return `Twilio answered ${status} (code ${String(parsed.code ?? 'none')}): ${parsed.message}`;
    }
  } catch {
    // Not JSON (a proxy's error page): the status says enough.
  }
  return `Twilio answered ${status}`;
}

/**
 * Sends SMS through Twilio's Messages resource (`POST /2010-04-01/Accounts/{sid}/Messages.json`,
 * form encoded, HTTP Basic auth). 4xx answers other than 429 are permanent; 429, 5xx, network
 * failures and timeouts are transient.
 */
export function createTwilioSmsSender(options: TwilioSmsOptions): SmsSender {
  const endpoint = `${options.apiUrl.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(
    options.accountSid,
  )}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
  // A Messaging Service picks the sender number itself.
  const sender: Record<string, string> = options.from.startsWith('MG')
    ? { MessagingServiceSid: options.from }
    : { From: options.from };
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  return {
    async send(message) {
      const form = new URLSearchParams({ To: message.to, ...sender, Body: message.body });
      let response: Response;
      let body: string;
      try {
        response = await fetch(endpoint, {
          method: 'POST',
          headers: {
            Authorization: authorization,
            'Content-Type': 'application/x-www-form-urlencoded',
            Accept: 'application/json',
          },
          body: form.toString(),
          signal: AbortSignal.timeout(timeoutMs),
        });
        body = await response.text();
      } catch (error) {
        throw DeliveryError.transient(`Twilio request failed: ${(error as Error).message}`, error);
      }
      if (!response.ok) {
        const detail = describeTwilioError(response.status, body);
        const transient = response.status === 429 || response.status >= 500;
        throw new DeliveryError(detail, transient);
      }
      // Twilio has the message once it answered 2xx: a body we cannot read must not cause a resend.
      let providerId: string | null = null;
      try {
        const sid = (JSON.parse(body) as { sid?: unknown }).sid;
        if (typeof sid === 'string' && sid) providerId = sid;
      } catch {
        providerId = null;
      }
      return { providerId };
    },
  };
}
