import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { Types } from 'mongoose';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';

const ID_BYTES = 12;
const PAYLOAD_BYTES = 2 * ID_BYTES + 4;

/** What a valid token names. */
export interface SignedIds {
  companyId: Types.ObjectId;
  id: Types.ObjectId;
  /** Seconds since the epoch. */
  expires: number;
}

/**
 * The token of a signed link (a media file's, an export's): `<payload>.<signature>` in base64url, the payload being a
 * company's id, a record's id and an expiry, the signature an HMAC-SHA256 of it under a key derived (HKDF) from
 * JWT_SECRET with the link's own salt, so every process of a deployment signs and checks alike, one kind of link is
 * never another's, and a new JWT_SECRET voids every link at once (as it voids tokens).
 */
export class SignedIdToken {
  private readonly key: Buffer;

  constructor(secret: string, salt: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, salt, 'hmac-sha256 v1', 32));
  }

  make(companyId: CompanyId, id: Types.ObjectId, expires: number): string {
    const payload = Buffer.alloc(PAYLOAD_BYTES);
    Buffer.from(String(companyId), 'hex').copy(payload, 0);
    Buffer.from(id.toHexString(), 'hex').copy(payload, ID_BYTES);
    payload.writeUInt32BE(expires, 2 * ID_BYTES);
    return `${payload.toString('base64url')}.${this.signature(payload).toString('base64url')}`;
  }

  /** What the token names; null when it was changed or not made with this key (expired or not: the caller decides). */
  open(token: string): SignedIds | null {
    const [encoded, signature, ...rest] = token.split('.');
    const payload = Buffer.from(encoded ?? '', 'base64url');
    const given = Buffer.from(signature ?? '', 'base64url');
    const expected = this.signature(payload);
    // Only the canonical encoding: base64 leaves unused bits in a last character, which would decode alike.
    const canonical = payload.toString('base64url') === encoded && given.toString('base64url') === signature;
    if (rest.length > 0 || !canonical || payload.length !== PAYLOAD_BYTES || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return null;
    }
    return {
      companyId: new Types.ObjectId(payload.subarray(0, ID_BYTES).toString('hex')),
      id: new Types.ObjectId(payload.subarray(ID_BYTES, 2 * ID_BYTES).toString('hex')),
      expires: payload.readUInt32BE(2 * ID_BYTES),
    };
  }

  private signature(payload: Buffer): Buffer {
    return createHmac('sha256', this.key).update(payload).digest();
  }
}
