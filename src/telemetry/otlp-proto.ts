// The SDK's OTLP exporters for http/protobuf, in a module of their own: loaded with import() only when a signal is
// sent that way, so each protocol's exporters are a chunk of their own in dist/.
export { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
export { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-proto";
export { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
