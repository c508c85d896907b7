import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request, Response as ExpressResponse } from 'express';
import { from, of, switchMap, type Observable } from 'rxjs';
import type { AuthPrincipal } from '../../auth/auth-principal.js';
import { captureAnswer } from './answer-capture.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, parseIdempotencyKey } from './idempotency-key.js';
import { IdempotencyService, type Replay } from './idempotency.service.js';
import { fingerprintBody } from './request-fingerprint.js';

/**
 * `Idempotency-Key` on every POST of both interfaces, in one place. It runs after the guards, so a
 * repeat is authenticated, rate limited and checked for permission like any request, and the key is
 * scoped to the principal's company. Without the header it costs one header lookup.
 *
 * Public POSTs (login, register) have no company and ignore the header: their answers carry a token,
 * which a key the client chose would let anyone who guesses or sees the key replay.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(private readonly idempotency: IdempotencyService) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const header = request.headers[IDEMPOTENCY_KEY_HEADER];
    if (header === undefined || request.method !== 'POST') return next.handle();
    const companyId = (request.user as AuthPrincipal | undefined)?.companyId;
    if (!companyId) return next.handle();

    const key = parseIdempotencyKey(header);
    const body = fingerprintBody(request);
    const scoped = { companyId, key, route: `POST ${request.route.path}`, path: request.path };
    const response = context.switchToHttp().getResponse<ExpressResponse>();
    return from(this.idempotency.begin(scoped, body)).pipe(
      switchMap((outcome) => {
        if ('claimId' in outcome) {
          captureAnswer(response, async (answer) => this.idempotency.finish(outcome, answer, await body.ofReceivedBody()));
          return next.handle();
        }
        return of(replay(response, outcome));
      }),
    );
  }
}

/**
 * The kept answer as Nest sends a web `Response`: its status and body as they are. The headers go on
 * the response directly, next to the ones of this request (`x-request-id`, rate limits), which are
 * this request's own and not the first one's.
 */
function replay(response: ExpressResponse, kept: Replay): globalThis.Response {
  response.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
  response.setHeader('Content-Length', kept.body.length);
  if (kept.contentType) response.setHeader('Content-Type', kept.contentType);
  if (kept.location) response.setHeader('Location', kept.location);
  return new Response(kept.body.length > 0 ? kept.body : null, { status: kept.status });
}
