import { describe, expect, it } from '@jest/globals';
import { VerifiedTokens } from './verified-tokens.js';

describe('VerifiedTokens', () => {
  it('keeps a verification until the earlier of exp and iat + max age', () => {
    const tokens = new VerifiedTokens(100);
    tokens.remember('a', { iat: 1_000, exp: 1_050 });
    tokens.remember('b', { iat: 1_000, exp: 5_000 });
    expect(tokens.get('a', 1_049)).toEqual({ iat: 1_000, exp: 1_050 });
    expect(tokens.get('a', 1_050)).toBeUndefined();
    expect(tokens.get('b', 1_099)).toBeDefined();
    expect(tokens.get('b', 1_100)).toBeUndefined();
    expect(tokens.size).toBe(0);
  });

  it('keeps no token without exp or iat, or with nbf', () => {
    const tokens = new VerifiedTokens(100);
    tokens.remember('no-exp', { iat: 1_000 });
    tokens.remember('no-iat', { exp: 1_050 });
    tokens.remember('nbf', { iat: 1_000, exp: 1_050, nbf: 1_000 });
    expect(tokens.size).toBe(0);
  });

  it('drops the oldest verification when full', () => {
    const tokens = new VerifiedTokens(100, 2);
    for (const token of ['a', 'b', 'c']) tokens.remember(token, { iat: 1_000, exp: 1_050 });
    expect(tokens.get('a', 1_001)).toBeUndefined();
    expect(tokens.get('b', 1_001)).toBeDefined();
    expect(tokens.get('c', 1_001)).toBeDefined();
  });
});
