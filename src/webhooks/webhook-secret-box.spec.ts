import { describe, expect, it } from '@jest/globals';
import { loadAppConfig } from '../config/environment.js';
import { generateWebhookSecret } from './delivery/webhook-signature.js';
import { UnreadableSecretError, WebhookSecretBox } from './webhook-secret-box.js';

const box = (jwtSecret: string, keys?: string) =>
  new WebhookSecretBox(loadAppConfig({ NODE_ENV: 'test', JWT_SECRET: jwtSecret, WEBHOOK_SECRET_KEYS: keys }));
const K1 = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
const K2 = `k2:${Buffer.alloc(32, 2).toString('base64')}`;
const JWT = 'one-jwt-secret-long-enough-for-anything';

describe('WebhookSecretBox', () => {
  it('round-trips a secret without storing it in clear', () => {
    const secrets = box('one-jwt-secret-long-enough-for-anything');
    const secret = generateWebhookSecret();
    const sealed = secrets.seal(secret);
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain(secret.slice(6));
    expect(secrets.open(sealed)).toBe(secret);
  });

  it('uses a fresh IV each time', () => {
    const secrets = box('one-jwt-secret-long-enough-for-anything');
    expect(secrets.seal('whsec_same')).not.toBe(secrets.seal('whsec_same'));
  });

  it('opens in another process with the same JWT_SECRET, not with another one', () => {
    const sealed = box('one-jwt-secret-long-enough-for-anything').seal('whsec_abc');
    expect(box('one-jwt-secret-long-enough-for-anything').open(sealed)).toBe('whsec_abc');
    expect(() => box('a-rotated-jwt-secret-long-enough-too').open(sealed)).toThrow(UnreadableSecretError);
  });

  it('refuses tampered or malformed values', () => {
    const secrets = box('one-jwt-secret-long-enough-for-anything');
    const [version, iv, tag, ciphertext] = secrets.seal('whsec_abc').split('.');
    const flipped = Buffer.from(ciphertext, 'base64url');
    flipped[0] ^= 1;
    expect(() => secrets.open([version, iv, tag, flipped.toString('base64url')].join('.'))).toThrow(UnreadableSecretError);
    expect(() => secrets.open('whsec_abc')).toThrow(UnreadableSecretError);
    expect(() => secrets.open('v2.a.b.c')).toThrow(UnreadableSecretError);
    expect(() => secrets.open('v3.a.b.c')).toThrow(UnreadableSecretError);
  });

  describe('with WEBHOOK_SECRET_KEYS', () => {
    it('seals under the first key, with its id, independent of JWT_SECRET', () => {
      const sealed = box(JWT, `${K1},${K2}`).seal('whsec_abc');
      expect(sealed).toMatch(/^v2\.k1\.[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(box('a-rotated-jwt-secret-long-enough-too', K1).open(sealed)).toBe('whsec_abc');
    });

    it('rotates: a new first key seals, the old one listed after still opens, and dropped it does not', () => {
      const underK1 = box(JWT, K1).seal('whsec_old');
      const rotated = box(JWT, `${K2},${K1}`);
      expect(rotated.open(underK1)).toBe('whsec_old');
      expect(rotated.seal('whsec_new')).toMatch(/^v2\.k2\./);
      expect(rotated.needsReseal(underK1)).toBe(true);
      expect(rotated.needsReseal(rotated.seal('x'))).toBe(false);
      expect(() => box(JWT, K2).open(underK1)).toThrow('sealed under key id "k1", which WEBHOOK_SECRET_KEYS no longer lists');
    });

    it('still opens secrets sealed under the JWT_SECRET derivation before the keys were set', () => {
      const legacy = box(JWT).seal('whsec_legacy');
      expect(legacy).toMatch(/^v1\./);
      const keyed = box(JWT, K1);
      expect(keyed.open(legacy)).toBe('whsec_legacy');
      expect(keyed.needsReseal(legacy)).toBe(true);
      expect(box(JWT).needsReseal(legacy)).toBe(false);
    });
  });
});
