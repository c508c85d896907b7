import { BoundedMap } from '../common/bounded-map.js';

/** A token's claims as its signature, `iss` and `aud` were verified. */
export type VerifiedClaims = Record<string, unknown>;

interface Verified {
  claims: VerifiedClaims;
  /** The first second (Unix time) the verification no longer holds: the earlier of `exp` and `iat` + max age. */
  validUntil: number;
}

/** How many verified tokens are kept: a few MiB at most; past it the oldest verification is dropped. */
export const VERIFIED_TOKENS_MAX = 10_000;

/**
 * The bearer tokens this process verified lately, by their full text (signature included), so that a
 * client's next requests skip the HMAC and the JSON parsing of its token. A verification is reused only
 * while every check it passed still holds: the signature, `iss` and `aud` are fixed by the text, and of the
 * checks that depend on the clock, `exp` and the maximum age only end (so the entry ends with the earlier of
 * them); a token with `nbf` is never kept. The agent (active, role, token version) is still checked on every
 * request by the caller.
 */
export class VerifiedTokens {
  private readonly tokens: BoundedMap<string, Verified>;

  constructor(
    private readonly maxAgeSeconds: number,
    max = VERIFIED_TOKENS_MAX,
  ) {
    this.tokens = new BoundedMap(max);
  }

  /** The claims of a token verified earlier and still valid at `now` (Unix seconds), else undefined. */
  get(token: string, now: number): VerifiedClaims | undefined {
    const verified = this.tokens.get(token);
    if (verified === undefined) return undefined;
    if (now < verified.validUntil) return verified.claims;
    this.tokens.delete(token);
    return undefined;
  }

  /** Keeps a token that just passed verification, when the clock alone decides the end of its validity. */
  remember(token: string, claims: VerifiedClaims): void {
    const { exp, iat, nbf } = claims;
    if (typeof exp !== 'number' || typeof iat !== 'number' || nbf !== undefined) return;
    this.tokens.set(token, { claims, validUntil: Math.min(exp, iat + this.maxAgeSeconds) });
  }

  get size(): number {
    return this.tokens.size;
  }
}
