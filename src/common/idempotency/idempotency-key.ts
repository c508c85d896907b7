import { BadRequestException } from '@nestjs/common';
import type { AuthPrincipal } from '../../auth/auth-principal.js';

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

/**
 * The key as it is kept: the caller's own (contract section 18). Two agents, or two API keys, of a company
 * that happen to send the same Idempotency-Key make two requests, and neither is answered the other's kept
 * answer (which may hold a secret shown once, such as a new API key). Prefixed to the key rather than kept in
 * a field of its own, so that the unique index on company and key still serves the claim.
 */
export function principalScopedKey(principal: AuthPrincipal, key: string): string {
  const owner = principal.kind === 'agent' ? `agent:${principal.agentId}` : `api-key:${principal.apiKeyId}`;
  // The key has no space (visible ASCII only), so the two parts cannot run into each other.
  return `${owner} ${key}`;
}
