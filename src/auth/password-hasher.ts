import { Injectable } from '@nestjs/common';
import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { AppConfig } from '../config/app-config.js';

const scrypt = (password: string, salt: Buffer, length: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))),
  );

const KEY_LENGTH = 32;
const R = 8;
const P = 1;

/** scrypt needs 128 × N × r bytes; node refuses more than `maxmem` (32 MiB by default, too little for N = 2^17). */
function scryptOptions(N: number, r: number, p: number): ScryptOptions {
  return { N, r, p, maxmem: 128 * N * r + 1024 * 1024 };
}

/**
 * scrypt from node:crypto, stored as `scrypt$N$r$p$salt$hash` so that the cost can be raised: a hash made
 * with a lower cost than PASSWORD_SCRYPT_LOG_N still verifies, and `needsRehash` tells login to replace it.
 */
@Injectable()
export class PasswordHasher {
  private readonly N: number;
  /**
   * A real hash of nothing, checked when a login e-mail is unknown so both answers take the same time. Made on
   * first need rather than at start-up, where its 128 MiB of scrypt memory (at N = 2^17) would be a spike for nothing.
   */
  private decoy?: Promise<string>;

  constructor(config: AppConfig) {
    this.N = 2 ** config.passwordScryptLogN;
  }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await scrypt(password, salt, KEY_LENGTH, scryptOptions(this.N, R, P));
    return ['scrypt', this.N, R, P, salt.toString('base64'), key.toString('base64')].join('$');
  }

  async verify(password: string, stored: string | undefined): Promise<boolean> {
    const [scheme, n, r, p, salt, hash] = (stored ?? (await (this.decoy ??= this.hash(randomBytes(16).toString('hex'))))).split('$');
    if (scheme !== 'scrypt' || !salt || !hash) return false;
    const expected = Buffer.from(hash, 'base64');
    const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, scryptOptions(Number(n), Number(r), Number(p)));
    return timingSafeEqual(actual, expected) && stored !== undefined;
  }

  /** True for a hash made with a lower cost than the configured one (or another scheme). */
  needsRehash(stored: string): boolean {
    const [scheme, n, r, p] = stored.split('$');
    return scheme !== 'scrypt' || Number(n) < this.N || Number(r) < R || Number(p) < P;
  }
}
