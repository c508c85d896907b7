import { ForbiddenException, GoneException, Injectable } from '@nestjs/common';
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Types } from 'mongoose';
import { AppConfig } from '../config/app-config.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';

export const SIGNED_EXPORT_PATH = '/v1/privacy-exports';
/** Contract section 23: a finished export serves without credentials for 7 days. */
export const EXPORT_LINK_TTL_MS = 7 * 86_400_000;
const ID_BYTES = 12;
const PAYLOAD_BYTES = 2 * ID_BYTES + 4;
export const INVALID_EXPORT_LINK = 'This export link is not valid: it was changed or not issued by this server';

/**
 * Signed download links of exports, made as media links are (MediaLinks): `<company id | request id | expiry>` and
 * its HMAC-SHA256 under a key derived from JWT_SECRET (its own derivation, so a media link is no export link).
 */
@Injectable()
export class ExportLinks {
  private readonly key: Buffer;

  constructor(
    config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', config.jwtSecret, 'parley/export-links', 'hmac-sha256 v1', 32));
  }

  /** A link valid 7 days after the export completed. */
  sign(companyId: CompanyId, requestId: Types.ObjectId, completedAt: Date): { url: string; expiresAt: Date } {
    const expires = Math.floor((completedAt.getTime() + EXPORT_LINK_TTL_MS) / 1000);
    const payload = Buffer.alloc(PAYLOAD_BYTES);
    Buffer.from(String(companyId), 'hex').copy(payload, 0);
    Buffer.from(requestId.toHexString(), 'hex').copy(payload, ID_BYTES);
    payload.writeUInt32BE(expires, 2 * ID_BYTES);
    return {
      url: `${SIGNED_EXPORT_PATH}/${payload.toString('base64url')}.${this.signature(payload).toString('base64url')}`,
      expiresAt: new Date(expires * 1000),
    };
  }

  /** The export a token names; 403 when it was not made here as it is, 410 once expired. */
  verify(token: string): { companyId: Types.ObjectId; requestId: Types.ObjectId } {
    const [encoded, signature, ...rest] = token.split('.');
    const payload = Buffer.from(encoded ?? '', 'base64url');
    const given = Buffer.from(signature ?? '', 'base64url');
    const expected = this.signature(payload);
    const canonical = payload.toString('base64url') === encoded && given.toString('base64url') === signature;
    if (rest.length > 0 || !canonical || payload.length !== PAYLOAD_BYTES || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new ForbiddenException(INVALID_EXPORT_LINK);
    }
    if (payload.readUInt32BE(2 * ID_BYTES) * 1000 <= this.clock.now().getTime()) throw new GoneException('This export link has expired');
    return {
      companyId: new Types.ObjectId(payload.subarray(0, ID_BYTES).toString('hex')),
      requestId: new Types.ObjectId(payload.subarray(ID_BYTES, 2 * ID_BYTES).toString('hex')),
    };
  }

  private signature(payload: Buffer): Buffer {
    return createHmac('sha256', this.key).update(payload).digest();
  }
}
