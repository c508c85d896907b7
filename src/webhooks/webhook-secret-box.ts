import { Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { AppConfig } from '../config/app-config.js';

const VERSION = 'v1';
const HKDF_SALT = 'parley/webhook-secrets';
const HKDF_INFO = 'aes-256-gcm v1';

export class UnreadableSecretError extends Error {
  constructor() {
    super('The signing secret cannot be decrypted (was JWT_SECRET changed since the webhook was created?)');
    this.name = 'UnreadableSecretError';
  }
}

/**
 * Keeps webhook signing secrets encrypted at rest (AES-256-GCM). Signing needs the secret itself, so
 * a hash will not do; the key is derived with HKDF from JWT_SECRET, the one secret every process of
 * a deployment already shares. Rotating JWT_SECRET therefore makes stored secrets unreadable.
 */
@Injectable()
export class WebhookSecretBox {
  private readonly key: Buffer;

  constructor(config: AppConfig) {
    this.key = Buffer.from(hkdfSync('sha256', config.jwtSecret, HKDF_SALT, HKDF_INFO, 32));
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url')).join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || !ciphertext) throw new UnreadableSecretError();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new UnreadableSecretError();
    }
  }
}
