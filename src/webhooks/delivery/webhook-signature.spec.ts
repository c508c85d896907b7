import { describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { generateWebhookSecret, signWebhook } from './webhook-signature.js';

describe('webhook signatures', () => {
  it('matches the Standard Webhooks reference vector', () => {
    // The example of the Standard Webhooks specification and its reference libraries.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    expect(signWebhook(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, body)).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it('signs id, timestamp and body: changing any of them changes the signature', () => {
    const secret = generateWebhookSecret();
    const base = signWebhook(secret, 'dlv_1', 1700000000, '{"a":1}');
    expect(signWebhook(secret, 'dlv_2', 1700000000, '{"a":1}')).not.toBe(base);
    expect(signWebhook(secret, 'dlv_1', 1700000001, '{"a":1}')).not.toBe(base);
    expect(signWebhook(secret, 'dlv_1', 1700000000, '{"a":2}')).not.toBe(base);
    expect(signWebhook(generateWebhookSecret(), 'dlv_1', 1700000000, '{"a":1}')).not.toBe(base);
  });

  it('keys the HMAC with the decoded secret, as a receiver would verify it', () => {
    const secret = generateWebhookSecret();
    const key = Buffer.from(secret.split('_')[1], 'base64');
    const expected = createHmac('sha256', key).update('dlv_9.1700000000.{}').digest('base64');
    expect(signWebhook(secret, 'dlv_9', 1700000000, '{}')).toBe(`v1,${expected}`);
  });

  it('makes whsec_ secrets of 32 random bytes, never twice the same', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(secret);
  });
});
