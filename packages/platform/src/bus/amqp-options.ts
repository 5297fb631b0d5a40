import type { BusLogger } from './logger';

export interface AmqpTransportOptions {
  /**
   * `amqp://user:pass@host:port/vhost`, or the addresses of a cluster's nodes: the transport connects
   * to the first that answers and, when that connection drops, to another.
   */
  url: string | readonly string[];
  /** Consumers' queues are named `<serviceName>.<consumer>`. */
  serviceName: string;
  logger?: BusLogger;
  /** Deliveries before a failing message goes to `<queue>.dlq` (default 5). */
  maxAttempts?: number;
  /** Time a failed message waits in `<queue>.retry` before it is delivered again (default 1000 ms). */
  retryDelayMs?: number;
  /** Unacknowledged messages per consumer (default 10). */
  prefetch?: number;
  /** A handler still running after this long counts as failed (default 5 minutes). */
  handlerTimeoutMs?: number;
  /** How long publish() waits for the broker's confirm (default 5000 ms). */
  confirmTimeoutMs?: number;
  /** First reconnect delay (default 250 ms); doubles per failed attempt. */
  reconnectInitialDelayMs?: number;
  /** Cap of the reconnect delay (default 10000 ms). */
  reconnectMaxDelayMs?: number;
  /**
   * Prefix of the exchange and queue names, so several environments (or test runs) share one broker
   * without seeing each other's messages. Default none: exchange `hwp.events`.
   */
  namespace?: string;
  /**
   * Deletes a consumer's queues after they have been unused this long (`x-expires`). For ephemeral
   * environments only: a queue declared with it cannot be redeclared without it.
   */
  queueExpiresMs?: number;
  /**
   * What consumers' work queues (`<queue>`, `.retry`, `.dlq`) are declared as (default `quorum`:
   * replicated, with the broker's delivery limit); `classic` for a broker without quorum queues.
   * Broadcast queues are exclusive classic queues either way.
   */
  queueType?: 'quorum' | 'classic';
  /** AMQP heartbeat, which detects a silently dead connection (default 10 s). */
  heartbeatSeconds?: number;
  /**
   * How long publish() waits for a connection while disconnected (e.g. during a failover to another
   * node) before it rejects (default 0: at once). Keep it below the outbox relay's publish timeout.
   */
  publishWaitMs?: number;
  /** How long start() waits for the first connection before carrying on in the background (default 5000 ms). */
  startTimeoutMs?: number;
  /** Names this process's broadcast queues (default random); unique among the service's replicas. */
  replicaId?: string;
}
