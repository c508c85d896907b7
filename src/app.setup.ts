import { VersioningType, type INestApplication } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { NestExpressApplication, NestExpressBodyParserOptionsFor } from '@nestjs/platform-express';
import type { Express, RequestHandler } from 'express';
import helmet from 'helmet';
import { MAX_BODY_KEYS, verifyJsonBody } from './common/body-shape.js';
import { InterfaceExceptionFilter } from './common/errors/interface-exception.filter.js';
import { earlyRequestMiddleware } from './common/logging/early-request.middleware.js';
import { QueryKeysGuard } from './common/query-keys.guard.js';
import { UnreadBodyGuard } from './common/unread-body.guard.js';
import { createValidationPipe, RejectOperatorKeysPipe } from './common/validation.js';
import { AppConfig } from './config/app-config.js';
import { Metrics } from './metrics/metrics.js';
import { tracer } from './tracing/trace-context.js';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { METRICS_PATH, metricsHandler } from './metrics/metrics-endpoint.js';
import { DOCS_PATH, setupSwagger } from './swagger.js';

/** The largest JSON body accepted; media uploads are multipart and limited by MEDIA_MAX_BYTES instead. */
export const JSON_BODY_LIMIT = '1mb';

/**
 * The headers OWASP's REST cheat sheet asks of an API, through helmet: HSTS for a year including
 * subdomains, nosniff, frames refused (X-Frame-Options and CSP alike) and a CSP that lets a JSON answer
 * load nothing. Only these: each header costs bytes on every answer, and the others helmet sets by
 * default (COOP, CORP, Origin-Agent-Cluster, ...) govern HTML documents, which the API does not serve.
 */
const SECURITY_HEADERS = helmet({
  strictTransportSecurity: { maxAge: 31_536_000, includeSubDomains: true },
  frameguard: { action: 'deny' },
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  crossOriginOpenerPolicy: false,
  crossOriginResourcePolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/**
 * What a browser page of a CORS_ORIGINS origin may send and read. Bearer tokens and API keys travel in headers, never
 * cookies, so no credentials mode. The exposed headers are those clients act on: the request id, the rate limits,
 * Retry-After, a replayed answer's mark, the file name of a download, where a created record is.
 */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'x-api-key', 'Idempotency-Key', 'Last-Event-ID', 'x-request-id'];
export const CORS_EXPOSED_HEADERS = [
  'x-request-id',
  'RateLimit',
  'RateLimit-Policy',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'Retry-After',
  'Idempotent-Replayed',
  'WWW-Authenticate',
  'Content-Disposition',
  'Location',
];

/**
 * Swagger UI is an HTML page: helmet's default CSP (its own scripts and styles, data: images), frames still
 * refused. No `upgrade-insecure-requests`: TLS ends in front of the app, and on plain http (development) it
 * would send the page's files to an https that is not there.
 */
const DOCS_CONTENT_SECURITY_POLICY = helmet.contentSecurityPolicy({
  directives: { frameAncestors: ["'none'"], upgradeInsecureRequests: null },
});

/** A request not matched by any route: one label for them all, so that scanners cannot grow the series. */
const UNMATCHED_ROUTE = '(unmatched)';

/**
 * Times each request to the end of its answer, labelled by the route template Express matched (`/v1/conversations/:id`,
 * never the path itself). Two clock reads and one listener per request.
 */
function httpMetricsMiddleware(metrics: Metrics): RequestHandler {
  // Named, so that a CPU profile tells their share (npm run bench:metrics).
  return function timeHttpRequest(request, response, next) {
    const start = performance.now();
    response.once('finish', function observeHttpRequest() {
      const route = (request.route as { path?: string } | undefined)?.path;
      metrics.observeHttp(route === undefined ? UNMATCHED_ROUTE : request.baseUrl + route, request.method, response.statusCode, (performance.now() - start) / 1000);
    });
    next();
  };
}

/**
 * A server span per request, named by the route template once the answer is sent. The request and response emitters
 * are bound to its context: the body parser's callbacks run from socket events, which would otherwise lose it.
 */
const httpTracingMiddleware: RequestHandler = (request, response, next) => {
  const parent = propagation.extract(ROOT_CONTEXT, request.headers);
  const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'url.path': request.path } }, parent);
  const active = trace.setSpan(parent, span);
  response.once('finish', () => {
    const route = (request.route as { path?: string } | undefined)?.path;
    if (route !== undefined) {
      span.updateName(`${request.method} ${request.baseUrl}${route}`);
      span.setAttribute('http.route', request.baseUrl + route);
    }
    span.setAttribute('http.response.status_code', response.statusCode);
    if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  });
  context.bind(active, request);
  context.bind(active, response);
  context.with(active, next);
};

/**
 * Everything main.ts and the end-to-end tests share: versioned routes (`/v1` for Interface A,
 * version-neutral `/api/external` for Interface B), the client address behind proxies (TRUST_PROXY),
 * security headers, body parsing and its limits, validation, error bodies, docs (unless DOCS_ENABLED is false).
 * The app must be created with `bodyParser: false` so that the parser's limit is set here.
 */
export function configureApp(app: INestApplication): INestApplication {
  const express = app as NestExpressApplication;
  const config = app.get(AppConfig);
  // Express's own semantics: `req.ip` is then the client address the trusted proxies report.
  express.set('trust proxy', config.trustProxy);
  if (config.metrics.enabled) {
    // First, so that a request's duration includes everything the app does with it.
    express.use(httpMetricsMiddleware(app.get(Metrics)));
    if (config.metrics.port === undefined) {
      (express.getHttpAdapter().getInstance() as Express).get(METRICS_PATH, metricsHandler(app.get(Metrics), config.metrics.token));
    }
  }
  // Tracing on: each request is a server span, continuing the caller's trace (W3C traceparent) when it sends one.
  if (config.otlpEndpoint !== undefined) express.use(httpTracingMiddleware);
  // First, so that even a body the parsers refuse gets a request id and a log line.
  express.use(earlyRequestMiddleware);
  express.use(SECURITY_HEADERS);
  // Preflights are answered here (204), before authentication and rate limits; an origin not listed gets no
  // Access-Control-Allow-Origin, so the browser keeps the answer from its page. Event streams are answers like others.
  app.enableCors({
    origin: config.corsOrigins,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  });
  express.disable('x-powered-by');
  // API responses are not cacheable; computing an ETag per JSON body would be wasted work.
  express.set('etag', false);
  // Bodies with too many keys or nested too deep answer 400 before they are parsed (contract section 18):
  // JSON ones counted on their bytes, form ones (flat, without `extended`) by their number of fields.
  // Nest's type leaves `verify` out for its own rawBody option, which this app does not use; Express takes it.
  express.useBodyParser('json', { limit: JSON_BODY_LIMIT, verify: verifyJsonBody } as NestExpressBodyParserOptionsFor<'json'>);
  express.useBodyParser('urlencoded', { limit: JSON_BODY_LIMIT, extended: false, parameterLimit: MAX_BODY_KEYS });
  app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' });
  // Before the guards of the modules (authentication first): a body nobody reads, or a query parameter no route
  // reads, is refused whoever sends it.
  app.useGlobalGuards(new UnreadBodyGuard(app.get(Reflector)), new QueryKeysGuard());
  app.useGlobalPipes(new RejectOperatorKeysPipe(), createValidationPipe());
  app.useGlobalFilters(new InterfaceExceptionFilter());
  if (config.docsEnabled) {
    express.use(DOCS_PATH, DOCS_CONTENT_SECURITY_POLICY);
    setupSwagger(app);
  }
  return app;
}
