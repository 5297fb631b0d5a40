import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export interface TwilioCall {
  form: Record<string, string>;
  status: number;
}

/**
 * A Twilio stand-in that speaks the Messages resource of the 2010-04-01 API: Basic auth, form
 * bodies, Twilio's error body; `script(to, statuses)` makes it fail a number before accepting it.
 */
export async function startFakeTwilio(accountSid: string, authToken: string) {
  const calls: TwilioCall[] = [];
  /** Statuses to answer (in order) for a `To` before accepting it. */
  const scripted = new Map<string, number[]>();
  const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      raw += chunk;
    });
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(raw));
      const answer = (status: number, body: Record<string, unknown>) => {
        calls.push({ form, status });
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      };
      const error = (status: number, code: number, message: string) =>
        answer(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
      if (req.method !== 'POST' || req.url !== `/2010-04-01/Accounts/${accountSid}/Messages.json`) {
        return error(404, 20404, 'The requested resource was not found');
      }
      if (req.headers.authorization !== expectedAuth) return error(401, 20003, 'Authenticate');
      if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
        return error(400, 20001, 'Unsupported content type');
      }
      if (!form.To) return error(400, 21604, "A 'To' phone number is required.");
      if (!form.From && !form.MessagingServiceSid)
        return error(400, 21603, "A 'From' phone number is required.");
      if (!form.Body) return error(400, 21602, 'Message body is required.');
      const next = scripted.get(form.To)?.shift();
      if (next) return error(next, next === 429 ? 20429 : 20500, 'Scripted failure');
      answer(201, {
        sid: `SM${hex(16)}`,
        account_sid: accountSid,
        to: form.To,
        from: form.From ?? null,
        messaging_service_sid: form.MessagingServiceSid ?? null,
        body: form.Body,
        status: 'queued',
        api_version: '2010-04-01',
        date_created: new Date().toUTCString(),
      });
    });
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    callsTo: (to: string) => calls.filter((c) => c.form.To === to),
    script: (to: string, statuses: number[]) => scripted.set(to, statuses),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
