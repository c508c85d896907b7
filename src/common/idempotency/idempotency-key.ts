import { BadRequestException } from '@nestjs/common';

/** The request header (contract section 11, IETF draft-ietf-httpapi-idempotency-key-header). */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/** The response header of an answer sent again for a repeated request. */
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1..255 visible ASCII characters (no space, so two keys joined by Node's ", " are refused too). */
const BARE_KEY = /^[\x21-\x7e]{1,255}$/;

/** The draft's own form, a structured-field string: the same characters in double quotes, minus `"` and `\`. */
const QUOTED_KEY = /^"([\x21\x23-\x5b\x5d-\x7e]{1,255})"$/;

/**
 * The key a request carries: `abc` and the draft's quoted `"abc"` are the same key. Anything else,
 * including a request with two Idempotency-Key headers, is a 400.
 */
export function parseIdempotencyKey(value: string | string[]): string {
  if (typeof value === 'string') {
    const quoted = QUOTED_KEY.exec(value);
    if (quoted) return quoted[1];
    if (BARE_KEY.test(value)) return value;
  }
  throw new BadRequestException('Idempotency-Key must be 1 to 255 visible ASCII characters, sent once');
}
