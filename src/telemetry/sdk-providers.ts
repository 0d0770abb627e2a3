// The OpenTelemetry SDK's providers with the exporters the settings name: the OTLP exporters for http/json,
// http/protobuf and grpc (the grpc ones, and @grpc/grpc-js under them, loaded only when asked for), or the
// SDK's console exporters. Nothing here writes the wire format: the SDK's exporters do.
// A collector that refuses or never answers costs the run at most SHUTDOWN_BUDGET_MS: every exporter's
// request times out by then, the batch queues are bounded, and the flush at the end is raced against it.
import type { Resource } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, ConsoleLogRecordExporter, LoggerProvider } from "@opentelemetry/sdk-logs";
import type { LogRecordExporter } from "@opentelemetry/sdk-logs";
import {
  AggregationTemporality,
  ConsoleMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter } from "@opentelemetry/sdk-trace-base";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { SignalExport, TelemetrySettings } from "./settings.js";

/** The most the end of a run waits for the collector (the bar: the run ends within a second). */
export const SHUTDOWN_BUDGET_MS = 800;
/** At most this many spans or log records wait for export; more are dropped, never held in memory. */
export const MAX_QUEUE = 2048;

export interface Providers {
  tracer?: BasicTracerProvider;
  logger?: LoggerProvider;
  meter?: MeterProvider;
  /** The first export that failed (the SDK tells it to the exporter's callback only). */
  failure?: string;
}

interface AnyExporter<T> {
  export(items: T, done: (result: { code: number; error?: Error }) => void): void;
}

/** The exporter, with the first failed export's error kept in `providers.failure`. */
function watched<T, E extends AnyExporter<T>>(exporter: E, providers: Providers): E {
  const send = exporter.export.bind(exporter);
  exporter.export = (items: T, done) =>
    send(items, (result) => {
      if (result.code !== 0 && !providers.failure)
        providers.failure = result.error?.message ?? "the collector refused the export";
      done(result);
    });
  return exporter;
}

/** The grpc exporters' loader: the CLI's `() => import("./otlp-grpc.js")`; none in the Action (grpc-js is big). */
export type GrpcExporters = () => Promise<typeof import("./otlp-grpc.js")>;

/** The protocol's exporters (otlp-*.ts), loaded when asked for. */
function otlpExporters(signal: SignalExport, grpc: GrpcExporters | undefined) {
  if (signal.protocol === "grpc") {
    if (!grpc)
      throw new Error(
        "the Action exports over HTTP only (OTLP/gRPC is the CLI's): set OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf and the endpoint to the collector's OTLP/HTTP port (4318)",
      );
    return grpc();
  }
  if (signal.protocol === "http/json") return import("./otlp-json.js");
  return import("./otlp-proto.js");
}

/** An OTLP exporter's options: each request gives up after SHUTDOWN_BUDGET_MS. */
export function exporterOptions(signal: SignalExport) {
  return { url: signal.url, headers: signal.headers, timeoutMillis: SHUTDOWN_BUDGET_MS, concurrencyLimit: 4 };
}

async function spanExporter(signal: SignalExport, grpc: GrpcExporters | undefined): Promise<SpanExporter> {
  if (signal.kind === "console") return new ConsoleSpanExporter();
  const options = exporterOptions(signal);
  return new (await otlpExporters(signal, grpc)).OTLPTraceExporter(options);
}

async function logExporter(
  signal: SignalExport,
  grpc: GrpcExporters | undefined,
): Promise<LogRecordExporter> {
  if (signal.kind === "console") return new ConsoleLogRecordExporter();
  const options = exporterOptions(signal);
  return new (await otlpExporters(signal, grpc)).OTLPLogExporter(options);
}

async function metricExporter(
  signal: SignalExport,
  settings: TelemetrySettings,
  grpc: GrpcExporters | undefined,
): Promise<PushMetricExporter> {
  const temporality =
    settings.temporality === "delta" ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE;
  if (signal.kind === "console") return new ConsoleMetricExporter({ temporalitySelector: () => temporality });
  const options = { ...exporterOptions(signal), temporalityPreference: temporality };
  return new (await otlpExporters(signal, grpc)).OTLPMetricExporter(options);
}

/** A batch processor's options (spans, log records): a bounded queue, each export given SHUTDOWN_BUDGET_MS. */
export function batchOptions(signal: SignalExport) {
  return {
    maxQueueSize: MAX_QUEUE,
    maxExportBatchSize: 512,
    scheduledDelayMillis: signal.intervalMs,
    exportTimeoutMillis: SHUTDOWN_BUDGET_MS,
  };
}

/** The metric reader's options: each export given SHUTDOWN_BUDGET_MS (the SDK wants the interval longer). */
export function readerOptions(signal: SignalExport) {
  return {
    exportIntervalMillis: Math.max(signal.intervalMs, SHUTDOWN_BUDGET_MS + 1),
    exportTimeoutMillis: SHUTDOWN_BUDGET_MS,
  };
}

/** A provider per signal the settings export. */
export async function startProviders(
  settings: TelemetrySettings,
  resource: Resource,
  grpc: GrpcExporters | undefined,
): Promise<Providers> {
  const { traces, logs, metrics } = settings.signals;
  const providers: Providers = {};
  if (traces)
    providers.tracer = new BasicTracerProvider({
      resource,
      spanProcessors: [
        new BatchSpanProcessor(watched(await spanExporter(traces, grpc), providers), batchOptions(traces)),
      ],
    });
  if (logs)
    providers.logger = new LoggerProvider({
      resource,
      processors: [
        new BatchLogRecordProcessor({
          exporter: watched(await logExporter(logs, grpc), providers),
          ...batchOptions(logs),
        }),
      ],
    });
  if (metrics)
    providers.meter = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: watched(await metricExporter(metrics, settings, grpc), providers),
          ...readerOptions(metrics),
        }),
      ],
    });
  return providers;
}

/**
 * Everything recorded is flushed and the providers shut down, within SHUTDOWN_BUDGET_MS however the collector
 * behaves. Resolves to the first failure's message (for the one warning line), or undefined.
 */
export async function shutdownProviders(providers: Providers): Promise<string | undefined> {
  const all = [providers.tracer, providers.logger, providers.meter].filter((p) => p !== undefined);
  let timer: NodeJS.Timeout | undefined;
  const outOfTime = new Promise<string>((resolve) => {
    timer = setTimeout(
      () => resolve(`the collector did not take the export within ${SHUTDOWN_BUDGET_MS} ms`),
      SHUTDOWN_BUDGET_MS,
    );
    timer.unref();
  });
  const done = Promise.all(
    all.map((provider) =>
      provider.forceFlush().then(
        () => provider.shutdown(),
        (e: unknown) => {
          void provider.shutdown().catch(() => undefined);
          throw e;
        },
      ),
    ),
  ).then(
    () => undefined,
    (e: unknown) => (e instanceof Error ? e.message : String(e)),
  );
  try {
    return (await Promise.race([done, outOfTime])) ?? providers.failure;
  } finally {
    clearTimeout(timer);
  }
}
