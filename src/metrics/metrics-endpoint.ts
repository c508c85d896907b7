import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metrics } from './metrics.js';

export const METRICS_PATH = '/metrics';

/**
 * Answers a scrape in the Prometheus text format; with a token, only to `Authorization: Bearer <token>` (compared in
 * constant time, on digests so that the lengths do not tell either). A plain Node.js handler: it serves on the API's
 * Express app and on a listener of its own alike, and no guard, rate limit or interceptor of the API runs for it.
 */
export function metricsHandler(metrics: Metrics, token: string | undefined): (request: IncomingMessage, response: ServerResponse) => void {
  const expected = token === undefined ? undefined : digest(`Bearer ${token}`);
  return (request, response) => {
    if (expected && !timingSafeEqual(digest(request.headers.authorization ?? ''), expected)) {
      response.writeHead(401, { 'www-authenticate': 'Bearer realm="metrics"', 'cache-control': 'no-store' }).end();
      return;
    }
    metrics.registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': metrics.registry.contentType, 'cache-control': 'no-store' }).end(text),
      () => response.writeHead(500).end(),
    );
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
