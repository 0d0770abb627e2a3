// What the environment asks of telemetry, read as Claude Code reads it (its monitoring docs): the switch
// CLAUDE_CODE_ENABLE_TELEMETRY=1, an exporter per signal (OTEL_METRICS_EXPORTER, OTEL_LOGS_EXPORTER,
// OTEL_TRACES_EXPORTER: otlp, console or none), the OTLP protocol, endpoint and headers (shared or per signal),
// the export intervals, OTEL_RESOURCE_ATTRIBUTES, and the two opt-ins for content (OTEL_LOG_USER_PROMPTS,
// OTEL_LOG_TOOL_DETAILS). Pure: the environment comes in as a map, and problems come back as sentences.

export const SIGNALS = ["metrics", "logs", "traces"] as const;
export type Signal = (typeof SIGNALS)[number];

export const PROTOCOLS = ["http/json", "http/protobuf", "grpc"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export type ExporterKind = "otlp" | "console";

/** Where and how one signal is sent. */
export interface SignalExport {
  kind: ExporterKind;
  protocol: Protocol;
  /** The full URL for http (…/v1/<signal>), the endpoint for grpc. */
  url: string;
  headers: Record<string, string>;
  /** How often the SDK exports (metrics' reader, the batch processors' delay). */
  intervalMs: number;
}

export interface TelemetrySettings {
  signals: Partial<Record<Signal, SignalExport>>;
  resourceAttributes: Record<string, string>;
  logUserPrompts: boolean;
  logToolDetails: boolean;
  /** OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE; Claude Code's default is delta. */
  temporality: "delta" | "cumulative";
  /** Values that must never be exported or printed: the headers' (an API key for the collector). */
  headerValues: string[];
  /** Variables that were set but not understood: one warning line says so. */
  problems: string[];
}

/** Claude Code's defaults: metrics every 60 s, logs every 5 s, traces every 5 s. */
const DEFAULT_INTERVAL_MS: Record<Signal, number> = { metrics: 60_000, logs: 5_000, traces: 5_000 };
const INTERVAL_VARIABLE: Record<Signal, string> = {
  metrics: "OTEL_METRIC_EXPORT_INTERVAL",
  logs: "OTEL_LOGS_EXPORT_INTERVAL",
  traces: "OTEL_TRACES_EXPORT_INTERVAL",
};
const DEFAULT_ENDPOINT: Record<Protocol, string> = {
  "http/json": "http://localhost:4318",
  "http/protobuf": "http://localhost:4318",
  grpc: "http://localhost:4317",
};

type Env = Readonly<Record<string, string | undefined>>;

/** A variable Claude Code reads as on: 1 or true. */
function truthy(value: string | undefined): boolean {
  return value !== undefined && ["1", "true", "yes", "on"].includes(value.trim().toLowerCase());
}

/** True when telemetry is switched on (the only check made before the telemetry code is loaded). */
export function telemetryEnabled(env: Env): boolean {
  return truthy(env.CLAUDE_CODE_ENABLE_TELEMETRY);
}

/** `k=v,k2=v2` as the OpenTelemetry specification writes headers and resource attributes (values %-encoded). */
export function parseKeyValues(
  text: string | undefined,
  what: string,
  problems: string[],
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (text ?? "").split(",")) {
    if (!part.trim()) continue;
    const eq = part.indexOf("=");
    if (eq <= 0) {
      problems.push(`${what}: "${part.trim().slice(0, 40)}" is not key=value`);
      continue;
    }
    const key = part.slice(0, eq).trim();
    const raw = part.slice(eq + 1).trim();
    try {
      out[key] = decodeURIComponent(raw);
    } catch {
      out[key] = raw;
    }
  }
  return out;
}

function exporterKind(signal: Signal, env: Env, problems: string[]): ExporterKind | undefined {
  const variable = `OTEL_${signal.toUpperCase()}_EXPORTER`;
  const names = (env[variable] ?? "")
    .split(",")
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  for (const name of names)
    if (name !== "otlp" && name !== "console" && name !== "none")
      problems.push(`${variable}=${name} is not one agent-ci exports (otlp, console or none)`);
  if (names.includes("otlp")) return "otlp";
  if (names.includes("console")) return "console";
  return undefined;
}

function protocolOf(signal: Signal, env: Env, problems: string[]): Protocol {
  const variable = `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_PROTOCOL`;
  const given = env[variable]?.trim() || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim();
  if (!given) return "http/protobuf";
  if ((PROTOCOLS as readonly string[]).includes(given)) return given as Protocol;
  problems.push(`OTLP protocol "${given}" is not http/json, http/protobuf or grpc; using http/protobuf`);
  return "http/protobuf";
}

/** The signal's URL as the specification builds it: a per-signal endpoint as given, else the base + /v1/<signal>. */
function urlOf(signal: Signal, protocol: Protocol, env: Env): string {
  const own = env[`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`]?.trim();
  if (own) return own;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || DEFAULT_ENDPOINT[protocol];
  if (protocol === "grpc") return base;
  return `${base.replace(/\/+$/, "")}/v1/${signal}`;
}

function intervalOf(signal: Signal, env: Env, problems: string[]): number {
  const variable = INTERVAL_VARIABLE[signal];
  const given = env[variable]?.trim();
  if (!given) return DEFAULT_INTERVAL_MS[signal];
  const ms = Number(given);
  if (Number.isFinite(ms) && ms > 0) return ms;
  problems.push(`${variable}=${given} is not a number of milliseconds`);
  return DEFAULT_INTERVAL_MS[signal];
}

/** The settings, or undefined when telemetry is off or no signal has an exporter. */
export function readTelemetrySettings(env: Env): TelemetrySettings | undefined {
  if (!telemetryEnabled(env)) return undefined;
  const problems: string[] = [];
  const shared = parseKeyValues(env.OTEL_EXPORTER_OTLP_HEADERS, "OTEL_EXPORTER_OTLP_HEADERS", problems);
  const signals: Partial<Record<Signal, SignalExport>> = {};
  const headerValues = new Set(Object.values(shared));
  for (const signal of SIGNALS) {
    const kind = exporterKind(signal, env, problems);
    if (!kind) continue;
    const variable = `OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_HEADERS`;
    const own = parseKeyValues(env[variable], variable, problems);
    for (const value of Object.values(own)) headerValues.add(value);
    const protocol = protocolOf(signal, env, problems);
    signals[signal] = {
      kind,
      protocol,
      url: urlOf(signal, protocol, env),
      headers: { ...shared, ...own },
      intervalMs: intervalOf(signal, env, problems),
    };
  }
  if (!Object.keys(signals).length) return undefined;
  const temporality = env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE?.trim().toLowerCase();
  return {
    signals,
    resourceAttributes: parseKeyValues(env.OTEL_RESOURCE_ATTRIBUTES, "OTEL_RESOURCE_ATTRIBUTES", problems),
    logUserPrompts: truthy(env.OTEL_LOG_USER_PROMPTS),
    logToolDetails: truthy(env.OTEL_LOG_TOOL_DETAILS),
    temporality: temporality === "cumulative" ? "cumulative" : "delta",
    headerValues: [...headerValues].filter(Boolean),
    problems,
  };
}
