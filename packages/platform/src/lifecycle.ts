import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { createAppServer } from './http/app-server';

type Closer = () => Promise<void> | void;

/**
 * Owns a process's servers and resources and shuts them down in order on SIGTERM/SIGINT:
 * stop accepting, end long-lived streams, let in-flight requests finish, then close the
 * resources (bus, database) in reverse order of registration, and exit.
 */
export class Lifecycle {
  private readonly servers: Server[] = [];
  private readonly closers: { name: string; close: Closer }[] = [];
  private readonly streamClosers = new Set<() => void>();
  private shuttingDown?: Promise<void>;

  constructor(
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {}

  get isShuttingDown(): boolean {
    return this.shuttingDown !== undefined;
  }

  /** Registers a resource to close at shutdown (closed last-in first-out). */
  onShutdown(name: string, close: Closer): void {
    this.closers.push({ name, close });
  }

  /** Long-lived responses (SSE) register here so shutdown can end them instead of waiting. */
  trackStream(close: () => void): () => void {
    this.streamClosers.add(close);
    return () => this.streamClosers.delete(close);
  }

  async listen(app: Express, port: number, host: string): Promise<Server> {
    const server = createAppServer(app);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Keep-alive slightly above the usual proxy idle timeout so nginx never reuses a closed socket.
    server.keepAliveTimeout = 65_000;
    server.headersTimeout = 66_000;
    this.servers.push(server);
    return server;
  }

  installSignalHandlers(exit: (code: number) => void = (code) => process.exit(code)): void {
    const onSignal = (signal: NodeJS.Signals) => {
      this.logger.info({ signal }, 'shutting down');
      void this.shutdown().then(
        () => exit(0),
        (error: unknown) => {
          this.logger.error({ err: error }, 'shutdown failed');
          exit(1);
        },
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }

  shutdown(): Promise<void> {
    this.shuttingDown ??= this.runShutdown();
    return this.shuttingDown;
  }

  private async runShutdown(): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    const drained = Promise.all(
      this.servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            // Connections that finish their request while we drain go idle; close those too.
            const sweep = setInterval(() => server.closeIdleConnections(), 100);
            server.close(() => {
              clearInterval(sweep);
              resolve();
            });
            server.closeIdleConnections();
          }),
      ),
    );
    for (const close of this.streamClosers) close();
    this.streamClosers.clear();

    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((resolve) => {
        // Leave a share of the budget for closing resources.
        timer = setTimeout(() => resolve(true), Math.max(0, deadline - Date.now() - 1_500));
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) {
      this.logger.warn('in-flight requests did not finish in time; closing their connections');
      for (const server of this.servers) server.closeAllConnections();
    }
    for (const { name, close } of [...this.closers].reverse()) {
      // A resource that never answers (a hung pool, a broker that went away) must not keep the
      // process past its budget: each gets what is left of it, at least a second.
      let closeTimer: NodeJS.Timeout | undefined;
      try {
        const budget = Math.max(1_000, deadline - Date.now());
        await Promise.race([
          Promise.resolve().then(close),
          new Promise((_, reject) => {
            closeTimer = setTimeout(() => reject(new Error(`not closed within ${budget} ms`)), budget);
          }),
        ]);
      } catch (error) {
        this.logger.warn({ err: error, resource: name }, 'resource did not close cleanly');
      } finally {
        clearTimeout(closeTimer);
      }
    }
    this.logger.info('shutdown complete');
  }
}
