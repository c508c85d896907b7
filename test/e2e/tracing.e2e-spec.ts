import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { createApiKey, registerCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** A caller's trace: the W3C header an upstream service (or a browser's instrumentation) sends. */
const CALLER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_TRACEPARENT = `00-${CALLER_TRACE_ID}-00f067aa0ba902b7-01`;

describe('tracing (OpenTelemetry, on with OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  // The official SDK as production runs it, but exporting to memory instead of over OTLP.
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    provider.register();
    receiver = await WebhookReceiver.start();
    t = await createTestApp({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' } });
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
  });

  it('shows an inbound message through to its webhook delivery as one trace, continued by the receiver', async () => {
    const company = await registerCompany(t.http);
    const key = await createApiKey(t.http, company, ['messages:write']);
    await t.http
      .post('/v1/webhooks')
      .set(company.auth)
      .send({ url: receiver.url('/hook'), events: ['message.received'] })
      .expect(201);
    exporter.reset();

    await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .set('traceparent', CALLER_TRACEPARENT)
      .send({ from: { phone: '+14155550100' }, text: 'Where is my order?' })
      .expect(201);
    const [delivered] = await receiver.received('/hook', 1);

    // The receiver gets the trace in the W3C header, under the caller's trace id.
    expect(delivered.headers.traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE_ID}-[0-9a-f]{16}-01$`));
    const spans = await waitFor(() => {
      const finished = exporter.getFinishedSpans();
      return finished.some((span) => span.name === 'webhook delivery') && finished;
    });
    const request = spans.find((span) => span.name === 'POST /api/external/messages');
    const delivery = spans.find((span) => span.name === 'webhook delivery');
    expect(request?.spanContext().traceId).toBe(CALLER_TRACE_ID);
    expect(request?.attributes).toMatchObject({ 'http.route': '/api/external/messages', 'http.response.status_code': 201 });
    expect(delivery?.spanContext().traceId).toBe(CALLER_TRACE_ID);
    expect(delivery?.attributes).toMatchObject({ 'http.response.status_code': 200 });
    // The span the receiver continues is the delivery's own.
    expect(delivered.headers.traceparent).toContain(delivery!.spanContext().spanId);
    // The lane work in between (the webhook fan-out consumer) is in the same trace.
    expect(spans.filter((span) => span.name.startsWith('consume ')).map((span) => span.spanContext().traceId)).toContain(CALLER_TRACE_ID);
  });

  it('never shows the kept trace context to readers of the event feed', async () => {
    const company = await registerCompany(t.http, 'Feed');
    const key = await createApiKey(t.http, company, ['messages:write']);
    await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .set('traceparent', CALLER_TRACEPARENT)
      .send({ from: { phone: '+14155550101' }, text: 'Hi' })
      .expect(201);
    const feed = await waitFor(async () => {
      const page = (await t.http.get('/v1/events').set(company.auth).expect(200)).body as { data: unknown[] };
      return page.data.length > 0 && page;
    });
    expect(JSON.stringify(feed)).not.toContain(CALLER_TRACE_ID);
  });
});
