import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** The header a request id arrives in and every response carries (contract section 3). */
export const REQUEST_ID_HEADER = 'x-request-id';

/** A caller's id is taken as is only when it is a short token that cannot break a log line or a header. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** What is read and written on a request: its headers and the `id` pino-http and this module share. */
export interface RequestWithId {
  headers: IncomingHttpHeaders;
  id?: unknown;
}

/** What is written on a response. */
export interface ResponseWithHeaders {
  headersSent: boolean;
  setHeader(name: string, value: string): unknown;
}

export function isSafeRequestId(value: unknown): value is string {
  return typeof value === 'string' && SAFE_REQUEST_ID.test(value);
}

/** The caller's `x-request-id` when it is safe, otherwise a new UUID. */
export function incomingRequestId(req: RequestWithId): string {
  const sent = req.headers[REQUEST_ID_HEADER];
  return isSafeRequestId(sent) ? sent : randomUUID();
}

/**
 * The request's id, for exception filters and anything else that reports on a request. It is the one
 * given to the request when it arrived (`req.id`); a request that somehow has none gets one now, kept on
 * `req.id`, so every caller sees the same id.
 */
export function requestIdOf(req: RequestWithId): string {
  if (typeof req.id === 'string' && req.id !== '') return req.id;
  const id = incomingRequestId(req);
  req.id = id;
  return id;
}

/** Gives the request its id (keeping one it already has) and puts it on the response. */
export function assignRequestId(req: RequestWithId, res: ResponseWithHeaders): string {
  const id = requestIdOf(req);
  if (!res.headersSent) res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/**
 * Express middleware giving every request its id and response header. The request logger does the same
 * for the requests it sees, but it is Nest middleware and runs after the body parsers: mounted first,
 * this makes a body the parsers refuse (400, 413) still answer with `x-request-id`. With the logging
 * module, mount `earlyRequestMiddleware` (logging/early-request.middleware.ts) instead: it does this
 * and also logs such requests.
 */
export function requestIdMiddleware(req: RequestWithId, res: ResponseWithHeaders, next: () => void): void {
  assignRequestId(req, res);
  next();
}
