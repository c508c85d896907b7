import { Injectable, Logger } from '@nestjs/common';
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { AppConfig } from '../config/app-config.js';

/** Sealed under the key derived from JWT_SECRET (before WEBHOOK_SECRET_KEYS existed): `v1.<iv>.<tag>.<ciphertext>`. */
const LEGACY_VERSION = 'v1';
/** Sealed under a key of WEBHOOK_SECRET_KEYS: `v2.<key id>.<iv>.<tag>.<ciphertext>`. */
const KEYED_VERSION = 'v2';
const HKDF_SALT = 'parley/webhook-secrets';
const HKDF_INFO = 'aes-256-gcm v1';

export class UnreadableSecretError extends Error {
  constructor(reason = 'the value is damaged or sealed under another key') {
    super(`The signing secret cannot be decrypted: ${reason}`);
    this.name = 'UnreadableSecretError';
  }
}

function derive(secret: string | Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, HKDF_SALT, HKDF_INFO, 32));
}

/**
 * Keeps webhook signing secrets encrypted at rest (AES-256-GCM). Signing needs the secret itself, so a hash
 * will not do. New secrets are sealed under the first key of WEBHOOK_SECRET_KEYS and carry its id; every
 * listed key opens the secrets sealed under it, so a key is rotated by listing a new one first and dropping
 * the old one once nothing uses it (start-up re-seals, see WebhookSecretRotation). Secrets sealed before
 * (no key id) open with the key derived from JWT_SECRET, as they always did; without WEBHOOK_SECRET_KEYS
 * (never in production) new secrets are sealed that way too, with a warning at start-up.
 */
@Injectable()
export class WebhookSecretBox {
  private readonly legacyKey: Buffer;
  private readonly keys: Map<string, Buffer>;
  /** The id new secrets are sealed under; undefined: the JWT_SECRET derivation. */
  readonly currentKeyId: string | undefined;

  constructor(config: AppConfig) {
    this.legacyKey = derive(config.jwtSecret);
    this.keys = new Map(config.webhookSecretKeys.map(({ id, key }) => [id, derive(key)]));
    this.currentKeyId = config.webhookSecretKeys[0]?.id;
    if (this.currentKeyId === undefined) {
      new Logger('Webhooks').warn(
        'WEBHOOK_SECRET_KEYS is not set: webhook secrets are sealed under a key derived from JWT_SECRET, so a leaked ' +
          'JWT_SECRET opens them and rotating it makes them unreadable. Set WEBHOOK_SECRET_KEYS (required in production).',
      );
    }
  }

  seal(secret: string): string {
    const iv = randomBytes(12);
    const key = this.currentKeyId === undefined ? this.legacyKey : (this.keys.get(this.currentKeyId) as Buffer);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    const parts = [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url'));
    return (this.currentKeyId === undefined ? [LEGACY_VERSION, ...parts] : [KEYED_VERSION, this.currentKeyId, ...parts]).join('.');
  }

  open(sealed: string): string {
    const parts = sealed.split('.');
    const [key, iv, tag, ciphertext] = this.keyOf(parts);
    if (!iv || !tag || !ciphertext) throw new UnreadableSecretError();
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new UnreadableSecretError(parts[0] === LEGACY_VERSION ? 'sealed under JWT_SECRET, which has changed since' : undefined);
    }
  }

  /** True when the secret is not sealed under the current key, and a key is configured to seal it under. */
  needsReseal(sealed: string): boolean {
    return this.currentKeyId !== undefined && !sealed.startsWith(`${KEYED_VERSION}.${this.currentKeyId}.`);
  }

  /** The key and the remaining parts of a sealed value. */
  private keyOf([version, ...rest]: string[]): [Buffer, ...string[]] {
    if (version === LEGACY_VERSION && rest.length === 3) return [this.legacyKey, ...rest];
    if (version === KEYED_VERSION && rest.length === 4) {
      const [id, ...parts] = rest;
      const key = this.keys.get(id);
      if (!key) throw new UnreadableSecretError(`sealed under key id "${id}", which WEBHOOK_SECRET_KEYS no longer lists`);
      return [key, ...parts];
    }
    throw new UnreadableSecretError();
  }
}
