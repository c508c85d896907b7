import type { IncomingMessage, ServerResponse } from 'node:http';
import { PinoLogger } from 'nestjs-pino';
import { assignRequestId } from '../request-id.js';
import { completionLevel, principalFields, REQUEST_ID_LOG_KEY, type LoggedRequest } from './request-logger.options.js';

/**
 * Express middleware for the bootstrap to `app.use()` before anything else (body parsers, CORS):
 * - gives the request its id and the response its `x-request-id` (the request logger reuses `req.id`);
 * - writes the completion line, in the request logger's format, for a request the request logger never
 *   saw because something mounted before Nest's middleware answered it: a body the parsers refused
 *   (400, 413), a CORS preflight. The request logger is Nest middleware and runs after those.
 */
export function earlyRequestMiddleware(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  assignRequestId(req, res);
  // At `silent` (no level a completion line uses is on) there is no line to write: no listener either.
  if (PinoLogger.root !== undefined && !PinoLogger.root.isLevelEnabled('error')) {
    next();
    return;
  }
  const startedAt = Date.now();
  res.once('finish', () => {
    // pino-http sets `req.log` on every request it sees, and writes that request's line itself
    if ((req as { log?: unknown }).log === undefined) logUnseenRequest(req as LoggedRequest, res, startedAt);
  });
  next();
}

function logUnseenRequest(req: LoggedRequest, res: ServerResponse, startedAt: number): void {
  const root = PinoLogger.root; // the request logger's own pino instance, with its serializers and redaction
  const level = completionLevel(res.statusCode);
  // At `silent` the request logger is not mounted, so every request comes here: skip building its line.
  if (root === undefined || !root.isLevelEnabled(level)) return;
  const logger = root.child({ [REQUEST_ID_LOG_KEY]: req.id, req, ...principalFields(req.user) });
  logger[level]({ res, responseTime: Date.now() - startedAt }, 'request completed');
}
