import type { ServerResponse } from 'node:http';
import type { CapturedAnswer } from './answer-capture.js';
import { IDEMPOTENT_REPLAYED_HEADER } from './idempotency-key.js';

/**
 * The kept answer of an earlier request with the same Idempotency-Key, which a repeat gets instead of
 * running the route. The idempotency guard throws it, as a guard can only stop a route by throwing, and
 * the global exception filter sends it (`send`) as it is: no error body is made of it.
 */
export class IdempotentReplay extends Error {
  constructor(readonly answer: CapturedAnswer) {
    super('A repeated request gets the kept answer');
    this.name = 'IdempotentReplay';
  }

  /**
   * The kept status, headers and body bytes, plus `Idempotent-Replayed: true`, next to the headers this
   * request already has (`x-request-id`, rate limits): those are its own, not the first request's.
   */
  send(response: ServerResponse): void {
    const { status, headers, body } = this.answer;
    response.statusCode = status;
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    response.setHeader(IDEMPOTENT_REPLAYED_HEADER, 'true');
    response.end(body); // Node adds the Content-Length (none for a status without a body)
  }
}
