import { context, propagation, ROOT_CONTEXT, trace, type Context } from '@opentelemetry/api';

/** The tracer of Parley's own spans (requests, lane work, webhook deliveries). */
export const tracer = trace.getTracer('parley');

/**
 * The W3C `traceparent` of the span under way, to keep with what it causes (an event, a webhook delivery) so that the
 * work done later on a lane continues the same trace; undefined when there is none (tracing off: the OpenTelemetry
 * API is then a no-op, and nothing is kept).
 */
export function currentTraceParent(): string | undefined {
  if (!trace.getActiveSpan()?.isRecording()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a kept `traceparent` stands for, to start the lane work's span in; the root context without one. */
export function contextOfTraceParent(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}
