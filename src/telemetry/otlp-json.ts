// The SDK's OTLP exporters for http/json, in a module of their own: loaded with import() only when a signal is
// sent that way, so each protocol's exporters are a chunk of their own in dist/.
export { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
export { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
export { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-http";
