import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { CollabEvent, CollabEventType } from '@hwp/contracts';
import { expectEventually } from '@hwp/platform/test-kit';

/** A small Server-Sent Events client over a real socket (supertest would buffer the stream). */
export class SseClient {
  status = 0;
  headers: IncomingHttpHeaders = {};
  body = '';
  retry: number | null = null;
  readonly events: CollabEvent[] = [];
  /** `id:` lines, in arrival order, to check against the `data` ids. */
  readonly ids: number[] = [];
  readonly comments: string[] = [];
  ended = false;
  private pending = '';
  private destroy: () => void = () => {};

  static open(base: string, path: string, token: string, headers: Record<string, string> = {}) {
    const client = new SseClient();
    return new Promise<SseClient>((resolve, reject) => {
      const req = httpRequest(`${base}${path}`, {
        // Without a token (''), the stream is opened with what `headers` carry (a session cookie).
        headers: {
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
          Accept: 'text/event-stream',
          ...headers,
        },
        agent: false,
      });
      client.destroy = () => req.destroy();
      req.on('error', (error) => (client.status ? undefined : reject(error)));
      req.on('response', (res) => {
        client.status = res.statusCode ?? 0;
        client.headers = res.headers;
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => client.feed(chunk));
        res.on('end', () => {
          client.ended = true;
        });
        res.on('close', () => {
          client.ended = true;
        });
        if (client.status !== 200) res.on('end', () => resolve(client));
        else resolve(client);
      });
      req.end();
    });
  }

  private feed(chunk: string): void {
    if (this.status !== 200) {
      this.body += chunk;
      return;
    }
    this.pending += chunk;
    for (let end = this.pending.indexOf('\n\n'); end >= 0; end = this.pending.indexOf('\n\n')) {
      const block = this.pending.slice(0, end);
      this.pending = this.pending.slice(end + 2);
      let data: string | null = null;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        else if (line.startsWith('retry: ')) this.retry = Number(line.slice(7));
        else if (line.startsWith('id: ')) this.ids.push(Number(line.slice(4)));
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      if (data !== null) this.events.push(JSON.parse(data) as CollabEvent);
    }
  }

  of(type: CollabEventType): CollabEvent[] {
    return this.events.filter((e) => e.type === type);
  }

  async waitFor(predicate: (event: CollabEvent) => boolean, timeoutMs = 10_000): Promise<CollabEvent> {
    return expectEventually(
      () => {
        const found = this.events.find(predicate);
        if (!found) throw new Error(`no such event among ${JSON.stringify(this.events.map((e) => e.type))}`);
        return found;
      },
      { timeoutMs },
    );
  }

  close(): void {
    this.destroy();
  }
}
