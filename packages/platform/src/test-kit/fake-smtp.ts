import type { AddressInfo } from 'node:net';

/** A message as the fake SMTP server received it. */
export interface ReceivedMail {
  mailFrom: string;
  rcptTo: string[];
  headers: Record<string, string>;
  text: string;
}

/** Headers (unfolded, lowercased names) and the text body of a single-part message. */
function parseMail(raw: string): Pick<ReceivedMail, 'headers' | 'text'> {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let text = raw.slice(split + 4);
  if (/quoted-printable/i.test(headers['content-transfer-encoding'] ?? '')) {
    text = text
      .replace(/=\r\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)));
  }
  return { headers, text: text.replace(/\r\n$/, '') };
}

export interface FakeSmtp {
  /** `smtp://user:pass@127.0.0.1:port`, for SMTP_URL. */
  url: string;
  received: ReceivedMail[];
  /**
   * Waits for the next message to `to` that this waiter has not returned yet (the first call
   * returns the first message to `to`, the second call the second, ...).
   */
  nextMessage(to: string, timeoutMs?: number): Promise<ReceivedMail>;
  stop(): Promise<void>;
}

/**
 * An SMTP server for tests that speaks the real protocol (smtp-server): plain text with AUTH
 * PLAIN/LOGIN for `user`/`pass`, keeping every message it accepts.
 */
export async function startFakeSmtp(user: string, pass: string): Promise<FakeSmtp> {
  const received: ReceivedMail[] = [];
  // Required here, not at the top: every test file loads this kit, few send mail.
  const { SMTPServer } = require('smtp-server') as typeof import('smtp-server');
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === user && auth.password === pass) callback(null, { user });
      else callback(Object.assign(new Error('Invalid username or password'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          rcptTo: session.envelope.rcptTo.map((r) => r.address),
          ...parseMail(Buffer.concat(chunks).toString('utf8')),
        });
        callback();
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.server.once('error', reject);
    server.server.listen(0, '127.0.0.1', () => resolve((server.server.address() as AddressInfo).port));
  });
  const returned = new Map<string, number>();
  return {
    url: `smtp://${user}:${pass}@127.0.0.1:${port}`,
    received,
    async nextMessage(to, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      const seen = returned.get(to) ?? 0;
      for (;;) {
        const mine = received.filter((m) => m.rcptTo.includes(to));
        if (mine.length > seen) {
          returned.set(to, seen + 1);
          return mine[seen];
        }
        if (Date.now() > deadline) throw new Error(`no message ${seen + 1} to ${to} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
