import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

export interface TcpProxyTarget {
  host: string;
  port: number;
}

/**
 * A TCP proxy on 127.0.0.1 whose availability a test controls, to simulate a broker or database
 * outage: stop() drops every connection and stops listening (new connections are refused), start()
 * listens again on the same port.
 */
export class TcpProxy {
  private server: Server | null = null;
  /** Each proxied connection: the client's socket and ours to the target. */
  private readonly pairs = new Set<[Socket, Socket]>();
  private listenPort = 0;
  private closed = false;
  private frozen = false;

  private constructor(private readonly target: TcpProxyTarget) {}

  /** Starts a proxy to `target` on a free port. */
  static async create(target: TcpProxyTarget): Promise<TcpProxy> {
    const proxy = new TcpProxy(target);
    await proxy.start();
    return proxy;
  }

  get port(): number {
    return this.listenPort;
  }

  get host(): string {
    return '127.0.0.1';
  }

  isListening(): boolean {
    return this.server !== null;
  }

  /** Number of client connections currently proxied. */
  connectionCount(): number {
    return this.pairs.size;
  }

  /** `url` with its host and port replaced by the proxy's. */
  rewriteUrl(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = this.host;
    parsed.port = String(this.listenPort);
    return parsed.toString();
  }

  /** Listens (again) on the proxy's port; the first call picks a free port. */
  async start(): Promise<void> {
    if (this.closed) throw new Error('tcp proxy is closed');
    if (this.server) return;
    const server = createServer((client) => this.pipe(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: this.host, port: this.listenPort }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('tcp proxy has no port');
    this.listenPort = address.port;
    this.server = server;
  }

  /** Destroys every proxied connection and stops listening; the port keeps its number for start(). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * Stops forwarding bytes without closing anything: connections stay open but nothing answers, like
   * a network path that black-holes packets (the case no error reports). New connections hang too.
   */
  freeze(): void {
    this.frozen = true;
    for (const [client, upstream] of this.pairs) {
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
    }
  }

  /** Forwards again, including what was held back while frozen. */
  thaw(): void {
    this.frozen = false;
    for (const [client, upstream] of this.pairs) {
      client.pipe(upstream);
      upstream.pipe(client);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.stop();
  }

  private pipe(client: Socket): void {
    if (!this.server) {
      client.destroy();
      return;
    }
    const upstream = tcpConnect({ host: this.target.host, port: this.target.port });
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    // Either side ending or failing takes the other down, like a dropped network path would.
    const teardown = (): void => {
      client.destroy();
      upstream.destroy();
      this.pairs.delete(pair);
    };
    client.on('error', teardown);
    upstream.on('error', teardown);
    client.on('close', teardown);
    upstream.on('close', teardown);
    if (this.frozen) {
      client.pause();
      upstream.pause();
      return;
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
