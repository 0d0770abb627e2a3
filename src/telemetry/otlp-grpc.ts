// The SDK's OTLP exporters for grpc (with @grpc/grpc-js under them), in a module of their own: loaded with import() only when a signal is
// sent that way, so each protocol's exporters are a chunk of their own in dist/.
export { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
export { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-grpc";
export { OTLPMetricExporter } from "@opentelemetry/exporter-metrics-otlp-grpc";
