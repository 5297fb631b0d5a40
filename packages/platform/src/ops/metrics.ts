import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { AmqpTransport } from '../bus/amqp-transport';
import type { BusObserver, MessageTransport } from '../bus/bus';
import { type ResponseObserver, routeTemplate } from '../http/request-context';

/** Times one job for the metrics (`ServiceMetrics.time`). */
export type JobTimer = <T>(job: string, work: () => Promise<T>) => Promise<T>;

/** What a metric's value is read from at scrape time: one number, or one per label set. */
export type GaugeReading = number | { labels: Record<string, string>; value: number }[];

/** Latency buckets of HTTP requests and jobs, in seconds (5 ms to 2 min). */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * The Prometheus metrics of one service instance (prom-client, a registry of its own, so several
 * apps in one process never share counters): HTTP latency by route template, the bus (outbox backlog,
 * publishes and deliveries by outcome, dead letters), jobs, and Node's own (event-loop lag, heap, GC)
 * plus the database pool. Every name starts with `hwp_`; `service` is a label of all of them.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly http: Histogram<'method' | 'route' | 'status'>;
  private readonly jobs: Histogram<'job' | 'outcome'>;
  private readonly published: Counter<'routing_key'>;
  private readonly deliveries: Counter<'queue' | 'outcome'>;

  constructor(readonly service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry, prefix: 'hwp_', eventLoopMonitoringPrecision: 20 });
    this.http = new Histogram({
      name: 'hwp_http_request_duration_seconds',
      help: 'HTTP requests by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers: [this.registry],
    });
    this.jobs = new Histogram({
      name: 'hwp_job_duration_seconds',
      help: 'Background and long jobs (imports, file processing, translations) by outcome',
      labelNames: ['job', 'outcome'],
      buckets: JOB_BUCKETS,
      registers: [this.registry],
    });
    this.published = new Counter({
      name: 'hwp_bus_published_total',
      help: 'Events the outbox relay published (broker-confirmed), by routing key',
      labelNames: ['routing_key'],
      registers: [this.registry],
    });
    this.deliveries = new Counter({
      name: 'hwp_bus_deliveries_total',
      help: 'Deliveries to this service’s consumers by queue and outcome (consumed, retried, dead_lettered)',
      labelNames: ['queue', 'outcome'],
      registers: [this.registry],
    });
  }

  /** A gauge read when Prometheus scrapes (a failing reading leaves the gauge empty, never the scrape). */
  gauge(
    name: string,
    help: string,
    read: () => GaugeReading | Promise<GaugeReading>,
    labelNames: string[] = [],
  ) {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        this.reset();
        let reading: GaugeReading;
        try {
          reading = await read();
        } catch {
          return;
        }
        if (typeof reading === 'number') this.set(reading);
        else for (const { labels, value } of reading) this.set(labels, value);
      },
    });
  }

  /** Times `work` as `job`, labelled `ok` or `failed`. */
  readonly time: JobTimer = async <T>(job: string, work: () => Promise<T>): Promise<T> => {
    const end = this.jobs.startTimer({ job });
    try {
      const result = await work();
      end({ outcome: 'ok' });
      return result;
    } catch (error) {
      end({ outcome: 'failed' });
      throw error;
    }
  };

  /** Records one request when its response ends (requestContext's observer: one clock read each end). */
  observer(): ResponseObserver {
    // One labelled child per method, route template and status (bounded: templates, never raw URLs),
    // so a request costs a map lookup instead of hashing its label set.
    const children = new Map<string, ReturnType<typeof this.http.labels>>();
    return (req, res, seconds) => {
      // Unmatched paths share one label.
      const route = routeTemplate(req) ?? 'unmatched';
      const key = `${req.method} ${res.statusCode} ${route}`;
      let child = children.get(key);
      if (!child) {
        child = this.http.labels({ method: req.method, route, status: String(res.statusCode) });
        children.set(key, child);
      }
      child.observe(seconds);
    };
  }

  /** Counts the bus traffic of `transport`. */
  observe(transport: MessageTransport): void {
    const observer: BusObserver = {
      published: (routingKey) => this.published.inc({ routing_key: routingKey }),
      delivered: (queue, outcome) => this.deliveries.inc({ queue, outcome }),
    };
    transport.observer = observer;
    if (transport instanceof AmqpTransport) {
      this.gauge(
        'hwp_dead_letter_queue_messages',
        'Messages in each RabbitMQ dead-letter queue (<queue>.dlq) of this service',
        async () =>
          (await transport.deadLetterDepths()).map(({ queue, messages }) => ({
            labels: { queue },
            value: messages,
          })),
        ['queue'],
      );
    }
  }

  /** Outbox backlog, dead letters kept here, and the database pool of `dataSource`. */
  watchDatabase(dataSource: DataSource): void {
    const backlog = async () => {
      const [row]: { pending: string; oldest: number | null }[] = await dataSource.query(
        `SELECT count(*) AS pending, EXTRACT(EPOCH FROM now() - min(created_at))::float8 AS oldest
           FROM outbox WHERE published_at IS NULL`,
      );
      return { pending: Number(row.pending), oldest: row.oldest ?? 0 };
    };
    this.gauge(
      'hwp_outbox_pending',
      'Outbox events not yet published',
      async () => (await backlog()).pending,
    );
    this.gauge(
      'hwp_outbox_oldest_pending_age_seconds',
      'Age of the oldest unpublished outbox event (0 when none)',
      async () => (await backlog()).oldest,
    );
    this.gauge(
      'hwp_dead_letters',
      'Dead letters stored by this service and not replayed (in-process bus; on RabbitMQ see <queue>.dlq)',
      async () => {
        const [row]: { count: string }[] = await dataSource.query(
          'SELECT count(*) AS count FROM dead_letters WHERE replayed_at IS NULL',
        );
        return Number(row.count);
      },
    );
    this.gauge(
      'hwp_db_pool_connections',
      'Database pool connections by state (total, idle, waiting clients)',
      () => {
        const pool = (
          dataSource.driver as { master?: { totalCount: number; idleCount: number; waitingCount: number } }
        ).master;
        if (!pool) return [];
        return [
          { labels: { state: 'total' }, value: pool.totalCount },
          { labels: { state: 'idle' }, value: pool.idleCount },
          { labels: { state: 'waiting' }, value: pool.waitingCount },
        ];
      },
      ['state'],
    );
  }

  /** The text exposition Prometheus scrapes. */
  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
