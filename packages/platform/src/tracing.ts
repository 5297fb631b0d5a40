import {
  type Context,
  context,
  isSpanContextValid,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import type { TracerProvider } from '@opentelemetry/sdk-trace';

/**
 * Distributed tracing (W3C Trace Context). The `traceparent` of the current position travels with the
 * request context: from an incoming HTTP request, into every outbox envelope written meanwhile, through
 * the broker, into the consumer on the other side, and on into what that consumer writes. Spans are
 * exported by OTLP/HTTP only when OTEL_EXPORTER_OTLP_ENDPOINT is set; without it nothing is recorded
 * and an incoming `traceparent` is passed on unchanged, so a tracing gateway in front still sees one trace.
 */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

let provider: TracerProvider | undefined;

export interface TracingOptions {
  service: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: base URL of an OTLP/HTTP collector (`/v1/traces` is appended). */
  endpoint?: string;
  /** OTEL_EXPORTER_OTLP_HEADERS: `key=value,key2=value2` sent with every export. */
  headers?: string;
  /** OTEL_BSP_SCHEDULE_DELAY: how long spans wait before a batch is exported (ms). */
  scheduleDelayMs?: number;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

export function tracingEnabled(): boolean {
  return provider !== undefined;
}

function parseHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at > 0)
      headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/**
 * Starts the process's tracer provider when an endpoint is configured (once per process: the
 * OpenTelemetry API keeps one global provider); otherwise tracing stays the API's no-op.
 */
export function startTracing(options: TracingOptions): Tracing {
  if (!options.endpoint) return { enabled: false, shutdown: async () => undefined };
  if (!provider) {
    // Loaded only when spans are exported: the SDK and the OTLP exporter are a sixth of a service's
    // start-up modules, which every process (and every test file) would load for nothing.
    const { AsyncLocalStorageContextManager } =
      require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
    const { OTLPTraceExporter } =
      require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    const { resourceFromAttributes } =
      require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
    const { BatchSpanProcessor, TracerProvider } =
      require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
    const exporter = new OTLPTraceExporter({
      url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces`,
      headers: parseHeaders(options.headers),
    });
    provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': options.service }),
      spanProcessors: [new BatchSpanProcessor({ exporter, scheduledDelayMillis: options.scheduleDelayMs })],
    });
    trace.setGlobalTracerProvider(provider);
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  const started = provider;
  return {
    enabled: true,
    async shutdown() {
      await started.shutdown();
      if (provider === started) provider = undefined;
      trace.disable();
      context.disable();
    },
  };
}

const tracer = () => trace.getTracer('hwp');

/** The context a valid `traceparent` (and `tracestate`) names, else the root context. */
export function parentContext(traceparent?: string, tracestate?: string): Context {
  const match = traceparent ? TRACEPARENT.exec(traceparent) : null;
  if (!match) return ROOT_CONTEXT;
  const spanContext = {
    traceId: match[1],
    spanId: match[2],
    traceFlags: Number.parseInt(match[3], 16) & TraceFlags.SAMPLED,
    isRemote: true,
    traceState: tracestate ? new TraceState(tracestate) : undefined,
  };
  return isSpanContextValid(spanContext) ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : ROOT_CONTEXT;
}

/** `traceparent` of a span (or of the parent a no-op span stands for), undefined when invalid. */
export function traceparentOf(span: Span | undefined): string | undefined {
  const ctx = span?.spanContext();
  if (!ctx || !isSpanContextValid(ctx)) return undefined;
  return `00-${ctx.traceId}-${ctx.spanId}-${(ctx.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A valid incoming `traceparent` header, or undefined. */
export function validTraceparent(value: unknown): string | undefined {
  return typeof value === 'string' &&
    TRACEPARENT.test(value) &&
    isSpanContextValid({
      traceId: value.slice(3, 35),
      spanId: value.slice(36, 52),
      traceFlags: 0,
    })
    ? value
    : undefined;
}

export type SpanKindName = 'server' | 'producer' | 'consumer' | 'internal';
const KINDS: Record<SpanKindName, SpanKind> = {
  server: SpanKind.SERVER,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
};

/** Starts a span under `parent` (only meaningful while tracing is enabled). */
export function startSpan(
  name: string,
  kind: SpanKindName,
  parent: Context,
  attributes: Record<string, string | number | boolean> = {},
): Span {
  return tracer().startSpan(name, { kind: KINDS[kind], attributes }, parent);
}

/** Runs `work` with `span` active for OpenTelemetry (and anything instrumented beneath). */
export function withSpan<T>(parent: Context, span: Span, work: () => T): T {
  return context.with(trace.setSpan(parent, span), work);
}

/** Ends a span with an error status when `error` is set. */
export function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({
      code: SpanStatusCode.ERROR,
      message: error instanceof Error ? error.message : String(error),
    });
  }
  span.end();
}

/** Runs `work` inside a span of its own when tracing is enabled (errors mark the span and rethrow). */
export async function traced<T>(
  name: string,
  kind: SpanKindName,
  parent: Context,
  attributes: Record<string, string | number | boolean>,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracingEnabled()) return work(undefined);
  const span = startSpan(name, kind, parent, attributes);
  try {
    const result = await withSpan(parent, span, () => work(span));
    endSpan(span);
    return result;
  } catch (error) {
    endSpan(span, error);
    throw error;
  }
}
