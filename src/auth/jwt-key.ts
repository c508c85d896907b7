import { Module } from '@nestjs/common';
import { createSecretKey, type KeyObject } from 'node:crypto';
import { AppConfig } from '../config/app-config.js';

/**
 * The HS256 key as a KeyObject. Handing jsonwebtoken a string makes it try to parse the string as a
 * PEM public key on every verification (~290 µs); a secret KeyObject skips that (~5 µs).
 */
export class JwtKey {
  readonly key: KeyObject;

  constructor(config: AppConfig) {
    this.key = createSecretKey(Buffer.from(config.jwtSecret, 'utf8'));
  }
}

@Module({
  providers: [{ provide: JwtKey, inject: [AppConfig], useFactory: (config: AppConfig) => new JwtKey(config) }],
  exports: [JwtKey],
})
export class JwtKeyModule {}
