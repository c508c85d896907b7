import { describe, expect, it } from '@jest/globals';
import { loadAppConfig } from '../config/environment.js';
import { generateWebhookSecret } from './delivery/webhook-signature.js';
import { UnreadableSecretError, WebhookSecretBox } from './webhook-secret-box.js';

const box = (jwtSecret: string) => new WebhookSecretBox(loadAppConfig({ NODE_ENV: 'test', JWT_SECRET: jwtSecret }));

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
  });
});
