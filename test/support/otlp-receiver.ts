// A loopback OpenTelemetry collector for tests: a real HTTP server on 127.0.0.1:0 taking OTLP/HTTP
// (/v1/metrics, /v1/logs, /v1/traces) as http/json and http/protobuf, and a real gRPC server (@grpc/grpc-js) for
// OTLP/gRPC. Protobuf is decoded with the protocol's own definitions (test/fixtures/otlp-proto/, from
// opentelemetry-proto), never by hand. What it received is kept raw (every byte, for the canary checks) and
// normalised into one shape whichever protocol carried it. A receiver can also refuse connections (a port
// nobody listens on) or take each request whole and never answer it (`held` names them).
import fs from "node:fs";
import http from "node:http";
import type net from "node:net";
import path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import protobuf from "protobufjs";

const PROTO_DIR = path.resolve(import.meta.dirname, "../fixtures/otlp-proto");
const SERVICES = {
  traces: "opentelemetry/proto/collector/trace/v1/trace_service.proto",
  metrics: "opentelemetry/proto/collector/metrics/v1/metrics_service.proto",
  logs: "opentelemetry/proto/collector/logs/v1/logs_service.proto",
} as const;
type Signal = keyof typeof SERVICES;
const REQUEST_TYPE: Record<Signal, string> = {
  traces: "opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest",
  metrics: "opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest",
  logs: "opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest",
};

export type AttrValue = string | number | boolean | AttrValue[] | Record<string, unknown> | null;
export type Attrs = Record<string, AttrValue>;

export interface ReceivedSpan {
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Attrs;
  events: Array<{ name: string; attributes: Attrs }>;
  resource: Attrs;
  scope: string;
}
export interface ReceivedLog {
  body: AttrValue;
  traceId: string;
  spanId: string;
  attributes: Attrs;
  resource: Attrs;
}
export interface ReceivedPoint {
  metric: string;
  unit: string;
  description: string;
  attributes: Attrs;
  value: number;
  resource: Attrs;
}

export interface Received {
  spans: ReceivedSpan[];
  logs: ReceivedLog[];
  points: ReceivedPoint[];
  /** Every request's body as it arrived (bytes) and its path and content type. */
  raw: Array<{ path: string; contentType: string; body: Buffer }>;
}

let root: protobuf.Root | undefined;
function protoRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => (path.isAbsolute(target) ? target : path.join(PROTO_DIR, target));
  r.loadSync(Object.values(SERVICES));
  root = r;
  return r;
}

const hex = (value: unknown): string => {
  if (typeof value === "string") {
    // OTLP/JSON writes ids as hex; a protobuf decoder hands bytes
    return value;
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString("hex");
  return "";
};

function anyValue(v: Record<string, unknown> | undefined): AttrValue {
  if (!v) return null;
  if ("stringValue" in v && v.stringValue != null) return v.stringValue as string;
  if ("boolValue" in v && v.boolValue != null) return v.boolValue as boolean;
  if ("intValue" in v && v.intValue != null) return Number(v.intValue);
  if ("doubleValue" in v && v.doubleValue != null) return Number(v.doubleValue);
  if ("arrayValue" in v && v.arrayValue)
    return ((v.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map(anyValue);
  if ("kvlistValue" in v && v.kvlistValue)
    return attrs(
      (v.kvlistValue as { values?: Array<{ key: string; value: Record<string, unknown> }> }).values,
    );
  return null;
}

function attrs(list: Array<{ key: string; value: Record<string, unknown> }> | undefined): Attrs {
  const out: Attrs = {};
  for (const { key, value } of list ?? []) out[key] = anyValue(value);
  return out;
}

type Obj = Record<string, unknown> & { attributes?: Array<{ key: string; value: Record<string, unknown> }> };
const arr = (v: unknown) => (Array.isArray(v) ? (v as Obj[]) : []);

/** One export request (OTLP/JSON's shape, or a protobuf decoded to the same field names) into `into`. */
export function collect(signal: Signal, body: Obj, into: Received): void {
  if (signal === "traces")
    for (const rs of arr(body.resourceSpans)) {
      const resource = attrs((rs.resource as Obj | undefined)?.attributes);
      for (const ss of arr(rs.scopeSpans))
        for (const s of arr(ss.spans))
          into.spans.push({
            name: s.name as string,
            traceId: hex(s.traceId),
            spanId: hex(s.spanId),
            parentSpanId: hex(s.parentSpanId),
            attributes: attrs(s.attributes),
            events: arr(s.events).map((e) => ({ name: e.name as string, attributes: attrs(e.attributes) })),
            resource,
            scope: ((ss.scope as Obj | undefined)?.name as string) ?? "",
          });
    }
  if (signal === "logs")
    for (const rl of arr(body.resourceLogs)) {
      const resource = attrs((rl.resource as Obj | undefined)?.attributes);
      for (const sl of arr(rl.scopeLogs))
        for (const r of arr(sl.logRecords))
          into.logs.push({
            body: anyValue(r.body as Record<string, unknown>),
            traceId: hex(r.traceId),
            spanId: hex(r.spanId),
            attributes: attrs(r.attributes),
            resource,
          });
    }
  if (signal === "metrics")
    for (const rm of arr(body.resourceMetrics)) {
      const resource = attrs((rm.resource as Obj | undefined)?.attributes);
      for (const sm of arr(rm.scopeMetrics))
        for (const m of arr(sm.metrics)) {
          const data = (m.sum ?? m.gauge ?? m.histogram) as Obj | undefined;
          for (const p of arr(data?.dataPoints))
            into.points.push({
              metric: m.name as string,
              unit: (m.unit as string) ?? "",
              description: (m.description as string) ?? "",
              attributes: attrs(p.attributes),
              value: Number(p.asDouble ?? p.asInt ?? p.sum ?? 0),
              resource,
            });
        }
    }
}

function decodeProtobuf(signal: Signal, body: Buffer): Obj {
  const type = protoRoot().lookupType(REQUEST_TYPE[signal]);
  return type.toObject(type.decode(body), { longs: String, defaults: false }) as Obj;
}

const SIGNAL_OF_PATH: Record<string, Signal> = {
  "/v1/traces": "traces",
  "/v1/metrics": "metrics",
  "/v1/logs": "logs",
};

export interface OtlpReceiver {
  /** http://127.0.0.1:<port> (OTEL_EXPORTER_OTLP_ENDPOINT). */
  url: string;
  received: Received;
  /** The paths of the requests taken whole and never answered (a collector that never answers), in order. */
  held: string[];
  /** Resolves once a request for each signal named arrived. */
  waitFor(signals: Signal[]): Promise<void>;
  /** Resolves once a request for any signal arrived. */
  waitForAny(): Promise<void>;
  close(): Promise<void>;
}

function emptyReceived(): Received {
  return { spans: [], logs: [], points: [], raw: [] };
}

/** `waitFor` and `waitForAny`: each resolves when its condition on the signals seen holds (checked on each request). */
function waiters(seen: Set<Signal>, listeners: Set<() => void>) {
  const until = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (done()) {
          listeners.delete(check);
          resolve();
        }
      };
      listeners.add(check);
      check();
    });
  return {
    waitFor: (signals: Signal[]) => until(() => signals.every((s) => seen.has(s))),
    waitForAny: () => until(() => seen.size > 0),
  };
}

/**
 * An OTLP/HTTP collector: `answer` "ok" (200), or "never" (reads and records the request, never answers it:
 * it is in `held`, and its connection stays open until the sender closes it).
 */
export async function startOtlpHttpReceiver(answer: "ok" | "never" = "ok"): Promise<OtlpReceiver> {
  const received = emptyReceived();
  const held: string[] = [];
  const seen = new Set<Signal>();
  const listeners = new Set<() => void>();
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const signal = SIGNAL_OF_PATH[req.url ?? ""];
      const contentType = req.headers["content-type"] ?? "";
      received.raw.push({ path: req.url ?? "", contentType, body });
      if (!signal) {
        res.writeHead(404).end();
        return;
      }
      const decoded = contentType.includes("json")
        ? (JSON.parse(body.toString("utf8")) as Obj)
        : decodeProtobuf(signal, body);
      collect(signal, decoded, received);
      if (answer === "never") held.push(req.url ?? "");
      seen.add(signal);
      for (const l of [...listeners]) l();
      if (answer === "never") return;
      res.writeHead(200, {
        "content-type": contentType.includes("json") ? "application/json" : "application/x-protobuf",
      });
      res.end(contentType.includes("json") ? "{}" : "");
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    held,
    ...waiters(seen, listeners),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that refuses connections: bound, then closed again. */
export async function refusingEndpoint(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** An OTLP/gRPC collector (the collector services of opentelemetry-proto, served by @grpc/grpc-js). */
export async function startOtlpGrpcReceiver(): Promise<OtlpReceiver> {
  const received = emptyReceived();
  const seen = new Set<Signal>();
  const listeners = new Set<() => void>();
  const server = new grpc.Server();
  for (const [signal, file] of Object.entries(SERVICES) as Array<[Signal, string]>) {
    const definition = protoLoader.loadSync(file, { includeDirs: [PROTO_DIR], longs: String });
    const pkg = grpc.loadPackageDefinition(definition);
    const name = REQUEST_TYPE[signal].replace(/\.Export\w+ServiceRequest$/, "");
    const service = name
      .split(".")
      .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], pkg) as Record<
      string,
      { service: grpc.ServiceDefinition }
    >;
    const serviceName = { traces: "TraceService", metrics: "MetricsService", logs: "LogsService" }[signal];
    server.addService(service[serviceName]!.service, {
      Export: (call: grpc.ServerUnaryCall<Obj, unknown>, done: grpc.sendUnaryData<unknown>) => {
        const bytes = (service[serviceName]!.service.Export!.requestSerialize as (v: unknown) => Buffer)(
          call.request,
        );
        received.raw.push({ path: `grpc:${signal}`, contentType: "application/grpc", body: bytes });
        collect(signal, call.request, received);
        seen.add(signal);
        for (const l of [...listeners]) l();
        done(null, {});
      },
    });
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    held: [],
    ...waiters(seen, listeners),
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}

/** The reference: every OTLP/JSON request Claude Code 2.1.328 sent (test/fixtures/claude-code-telemetry/). */
export function referenceTelemetry(): Received {
  const file = path.resolve(import.meta.dirname, "../fixtures/claude-code-telemetry/session.otlp.jsonl");
  const received = emptyReceived();
  for (const line of fs.readFileSync(file, "utf8").split("\n").filter(Boolean)) {
    const { path: p, body } = JSON.parse(line) as { path: string; body: Obj };
    const signal = SIGNAL_OF_PATH[p];
    if (signal) collect(signal, body, received);
  }
  return received;
}
