import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LevelWithSilent } from 'pino';
import type { Options } from 'pino-http';
import type { AuthPrincipal } from '../../auth/auth-principal.js';
import { assignRequestId } from '../request-id.js';

/** The key of the request id in every log line of a request (the problem-details body calls it the same). */
export const REQUEST_ID_LOG_KEY = 'requestId';

/** 5xx at `error`, everything else at `info`. */
export function completionLevel(statusCode: number): 'error' | 'info' {
  return statusCode >= 500 ? 'error' : 'info';
}

/** Request headers that carry credentials: never written to a log, whatever a serializer lets through. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

/** Query parameters whose values are personal data (a contact search: names, e-mails, phones): never logged. */
const REDACTED_QUERY_PARAMETERS = new Set(['search']);

/** The URL as logged: each value of a REDACTED_QUERY_PARAMETERS parameter replaced by `[redacted]`. */
export function loggedUrl(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0];
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {
        return pair;
      }
      return REDACTED_QUERY_PARAMETERS.has(decoded.replace(/\[.*$/, '')) ? `${name}=[redacted]` : pair;
    });
  return `${url.slice(0, start)}?${query.join('&')}`;
}

/** The request as the logger reads it (Express adds `ip`, the authentication guard `user`). */
export type LoggedRequest = IncomingMessage & { user?: AuthPrincipal | null; ip?: string };

/** The caller's tenant and identity, once the authentication guard has set `req.user`. */
export function principalFields(user: AuthPrincipal | null | undefined): Record<string, string> {
  if (user?.kind === 'agent') return { companyId: user.companyId, agentId: user.agentId };
  if (user?.kind === 'api-key') return { companyId: user.companyId, apiKeyId: user.apiKeyId };
  return {};
}

/**
 * pino-http options: JSON lines at `level`, one line per request when it completes (5xx at `error`, the
 * rest at `info`) with method, url, status, `responseTime` (ms), `requestId` and the principal's
 * `companyId` plus `agentId` or `apiKeyId`. Requests are logged small: no headers, no body, no query
 * object, and the values of search parameters cut from the URL; credentials headers are redacted even so. Logs made while handling a request carry its
 * `requestId`.
 */
export function requestLoggerOptions(level: LevelWithSilent): Options<LoggedRequest, ServerResponse> {
  return {
    level,
    formatters: { level: (label) => ({ level: label }) },
    genReqId: (req, res) => assignRequestId(req, res),
    customAttributeKeys: { reqId: REQUEST_ID_LOG_KEY },
    quietReqLogger: true,
    customLogLevel: (_req, res) => completionLevel(res.statusCode),
    // called when the request arrives (no principal yet) and again when it completes
    customProps: (req) => principalFields(req.user),
    // a 5xx without an error object gets a made-up "failed with status code" error whose stack is
    // pino-http's own: leave it out (the exception filters log the real error with its stack)
    customErrorObject: (_req, res, error, value: Record<string, unknown>) => {
      if (error.message !== `failed with status code ${res.statusCode}`) return value;
      const { err: _synthetic, ...rest } = value;
      return rest;
    },
    serializers: {
      req: (req: { id: unknown; method: string; url: string; remoteAddress?: string; raw?: LoggedRequest }) => ({
        id: req.id,
        method: req.method,
        url: loggedUrl(req.url),
        remoteAddress: req.raw?.ip ?? req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
}
