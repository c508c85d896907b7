import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** A signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

/**
 * The `webhook-signature` header of the Standard Webhooks convention: `v1,` + base64 of the
 * HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the base64-decoded part of
 * the secret after `whsec_`.
 */
export function signWebhook(secret: string, webhookId: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}
