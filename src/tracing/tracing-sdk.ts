import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';

/**
 * Starts OpenTelemetry's official Node.js tracing SDK for this process: spans batched and exported over OTLP/HTTP
 * (protobuf) to OTEL_EXPORTER_OTLP_ENDPOINT, W3C trace context, AsyncLocalStorage context. The exporter reads the
 * SDK's other OTEL_EXPORTER_OTLP_* variables (headers, timeout, compression) itself; OTEL_SERVICE_NAME names the
 * service (default `parley`). Answers what flushes and stops it, for shutdown.
 */
export function startTracing(version: string): () => Promise<void> {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: process.env.OTEL_SERVICE_NAME ?? 'parley', [ATTR_SERVICE_VERSION]: version }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  return () => provider.shutdown();
}
