import type { Express } from 'express';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import type { BlobStore } from './blob';
import type { Bus } from './bus';
import type { ClassType } from './db/data-source';
import type { Lifecycle } from './lifecycle';
import type { ServiceMetrics } from './ops/metrics';

/*
 * The ground floor of the platform's types: what a service's configuration has, what every feature
 * is built from, and what a service contributes. Everything else (the runtime that builds the deps,
 * the ops routes, the features) imports these from here, never from the runtime.
 */

/** The validated variables every service has (see baseConfigSpecs). */
export interface BaseConfig {
  readonly NODE_ENV: 'development' | 'test' | 'production';
  readonly PORT: number;
  readonly HOST: string;
  readonly TRUST_PROXY: false | number | string[];
  readonly LOG_LEVEL: string;
  readonly DATABASE_URL?: string;
  readonly DATA_DIR: string;
  /** The broker's URL, or its cluster nodes' separated by commas; read through brokerUrls(). */
  readonly AMQP_URL?: string;
  readonly AMQP_URLS?: string;
  readonly AMQP_PUBLISH_WAIT_MS: number;
  readonly AMQP_NAMESPACE: string;
  readonly AMQP_QUEUE_EXPIRES_MS?: number;
  readonly AMQP_QUEUE_TYPE: 'quorum' | 'classic';
  readonly S3_BUCKET?: string;
  readonly S3_ENDPOINT?: string;
  readonly S3_REGION: string;
  readonly S3_ACCESS_KEY_ID?: string;
  readonly S3_SECRET_ACCESS_KEY?: string;
  readonly S3_FORCE_PATH_STYLE: boolean;
  readonly S3_PUBLIC_ENDPOINT?: string;
  /** Where clients reach the API host (no trailing slash); unset: the embedded default. */
  readonly PUBLIC_API_URL?: string;
  /** Where clients reach the collaboration host (no trailing slash); unset: the embedded default. */
  readonly PUBLIC_COLLAB_URL?: string;
  /**
   * After loading, this host's own public URL (PUBLIC_API_URL or PUBLIC_COLLAB_URL, or the
   * deprecated variable PUBLIC_BASE_URL standing in for it); read it through `ownPublicUrl()`.
   */
  readonly PUBLIC_BASE_URL?: string;
  readonly SHUTDOWN_TIMEOUT_MS: number;
  readonly JSON_BODY_LIMIT_KB: number;
  readonly MAX_UPLOAD_MB: number;
  readonly BUS_MAX_ATTEMPTS: number;
  readonly BUS_RETRY_DELAY_MS: number;
  readonly OUTBOX_POLL_MS: number;
  readonly BUS_DEGRADED_AFTER_MS: number;
  readonly DB_POOL_SIZE: number;
  readonly BUS_MAX_HANDLER_TRANSACTIONS?: number;
  readonly OPS_TOKEN?: string;
  readonly OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  readonly OTEL_EXPORTER_OTLP_HEADERS?: string;
  readonly OTEL_SERVICE_NAME?: string;
  readonly OTEL_BSP_SCHEDULE_DELAY: number;
  readonly CORS_ORIGINS?: string;
  readonly BLOB_SIGNING_KEY?: string;
  readonly BLOB_DIR?: string;
}

/** What every feature module is built from. */
export interface PlatformDeps<C extends BaseConfig = BaseConfig> {
  service: string;
  config: C;
  logger: Logger;
  dataSource: DataSource;
  bus: Bus;
  blobs: BlobStore;
  lifecycle: Lifecycle;
  /** Prometheus metrics of this instance (`/metrics`); features add gauges and time jobs here. */
  metrics: ServiceMetrics;
  /** Path the local-folder blob driver serves pre-signed URLs under (mounted by the app). */
  blobRoutePrefix: string;
}

/** What a service contributes: its schema and how to build its app from the platform deps. */
export interface ServiceDefinition<C extends BaseConfig> {
  name: string;
  entities: ClassType[];
  migrations: ClassType[];
  /** Where the fs blob driver's pre-signed URLs are served (behind the gateway's routing rules). */
  blobRoutePrefix: string;
  createApp(deps: PlatformDeps<C>): Express;
  /** Registers the service's bus consumers. */
  registerConsumers?(deps: PlatformDeps<C>): Promise<void>;
}
