import { Injectable } from '@nestjs/common';
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { AppConfig } from '../../config/app-config.js';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Keeps the bodies of kept answers encrypted at rest (AES-256-GCM): some carry a secret that is shown
 * once and otherwise stored only hashed or encrypted (an API key, a webhook signing secret). The key is
 * derived with HKDF from JWT_SECRET, which every process of a deployment shares; each body is bound to
 * its company and Idempotency-Key, so it cannot be opened as another record's answer.
 */
@Injectable()
export class AnswerSeal {
  private readonly key: Buffer;

  constructor(config: AppConfig) {
    this.key = Buffer.from(hkdfSync('sha256', config.jwtSecret, 'parley/idempotency', 'aes-256-gcm v1', 32));
  }

  /** `iv | tag | ciphertext`. */
  seal(body: Buffer, boundTo: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv).setAAD(Buffer.from(boundTo));
    const ciphertext = Buffer.concat([cipher.update(body), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]);
  }

  /** Null when it cannot be opened: JWT_SECRET changed since, or the bytes are not what was sealed. */
  open(sealed: Buffer, boundTo: string): Buffer | null {
    if (sealed.length < IV_BYTES + TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(0, IV_BYTES)).setAAD(Buffer.from(boundTo));
      decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      return null;
    }
  }
}
