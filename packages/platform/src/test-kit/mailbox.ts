import type { Express } from 'express';
import request from 'supertest';

/** A message of the API host's development mailbox (`GET /dev/mailbox`, MAIL_DRIVER=memory). */
export interface MailboxItem {
  to: string;
  text: string;
  subject: string | null;
  template: string;
}

/**
 * Waits for the newest message to `to` in the dev mailbox and returns it. `app` is the API host's
 * app, or the base URL of a running API host.
 */
export async function latestMessage(
  app: Express | string,
  to: string,
  template?: string,
  timeoutMs = 10_000,
): Promise<MailboxItem> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body: { items?: unknown } =
      typeof app === 'string'
        ? await (await fetch(`${app}/dev/mailbox?to=${encodeURIComponent(to)}`)).json()
        : (await request(app).get('/dev/mailbox').query({ to })).body;
    const items = (body.items ?? []) as MailboxItem[];
    const found = items.find((m) => !template || m.template === template);
    if (found) return found;
    if (Date.now() > deadline)
      throw new Error(`no ${template ?? ''} message to ${to} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function codeIn(message: { text: string }): string {
  const match = /\b(\d{6})\b/.exec(message.text);
  if (!match) throw new Error(`no code in: ${message.text}`);
  return match[1];
}

export function linkIn(message: { text: string }): URL {
  const match = /(https?:\/\/\S+)/.exec(message.text);
  if (!match) throw new Error(`no link in: ${message.text}`);
  return new URL(match[1]);
}
