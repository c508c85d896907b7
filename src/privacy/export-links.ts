import { ForbiddenException, GoneException, Injectable } from '@nestjs/common';
import type { Types } from 'mongoose';
import { SignedIdToken } from '../common/signed-id-token.js';
import { AppConfig } from '../config/app-config.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';

export const SIGNED_EXPORT_PATH = '/v1/privacy-exports';
/** Contract section 23: a finished export serves without credentials for 7 days. */
export const EXPORT_LINK_TTL_MS = 7 * 86_400_000;
export const INVALID_EXPORT_LINK = 'This export link is not valid: it was changed or not issued by this server';

/** Signed download links of exports, made as media links are (SignedIdToken, with its own salt: a media link is no export link). */
@Injectable()
export class ExportLinks {
  private readonly tokens: SignedIdToken;

  constructor(
    config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.tokens = new SignedIdToken(config.jwtSecret, 'parley/export-links');
  }

  /** A link valid 7 days after the export completed. */
  sign(companyId: CompanyId, requestId: Types.ObjectId, completedAt: Date): { url: string; expiresAt: Date } {
    const expires = Math.floor((completedAt.getTime() + EXPORT_LINK_TTL_MS) / 1000);
    return { url: `${SIGNED_EXPORT_PATH}/${this.tokens.make(companyId, requestId, expires)}`, expiresAt: new Date(expires * 1000) };
  }

  /** The export a token names; 403 when it was not made here as it is, 410 once expired. */
  verify(token: string): { companyId: Types.ObjectId; requestId: Types.ObjectId } {
    const ids = this.tokens.open(token);
    if (!ids) throw new ForbiddenException(INVALID_EXPORT_LINK);
    if (ids.expires * 1000 <= this.clock.now().getTime()) throw new GoneException('This export link has expired');
    return { companyId: ids.companyId, requestId: ids.id };
  }
}
