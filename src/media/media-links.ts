import { ForbiddenException, GoneException, Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import { SignedIdToken } from '../common/signed-id-token.js';
import { AppConfig } from '../config/app-config.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';
import type { MessageView } from '../messages/message.view.js';

const HKDF_SALT = 'parley/media-links';
/** Where a signed link is served: the token names the company, the file and the expiry, and is signed. */
export const SIGNED_MEDIA_PATH = '/v1/media/signed';

/** The 403 of a link that was changed or not made here. */
export const INVALID_LINK_MESSAGE = 'This media link is not valid: it was changed or not issued by this server';
/** The expiry is rounded up to a step of at most this many seconds (and a tenth of the TTL): see `expiryFrom`. */
const MAX_STEP_SECONDS = 300;

/** The file a valid link names. */
export interface LinkedMedia {
  companyId: Types.ObjectId;
  mediaId: Types.ObjectId;
  /** Seconds the link still serves the file: how long a browser may keep it. */
  secondsLeft: number;
}

/**
 * Signed download links for media (contract section 14): a browser shows them with `<img src>`, which cannot send a
 * bearer token. A link's token names the company, the file and the expiry, signed (SignedIdToken). A changed byte
 * anywhere answers 403; a link past its expiry, 410.
 */
@Injectable()
export class MediaLinks {
  private readonly tokens: SignedIdToken;
  private readonly ttlSeconds: number;
  private readonly stepSeconds: number;

  constructor(
    config: AppConfig,
    private readonly clock: Clock,
  ) {
    this.tokens = new SignedIdToken(config.jwtSecret, HKDF_SALT);
    this.ttlSeconds = config.mediaUrlTtlSeconds;
    this.stepSeconds = Math.max(1, Math.min(MAX_STEP_SECONDS, Math.floor(config.mediaUrlTtlSeconds / 10)));
  }

  /** A link to the company's file valid at least MEDIA_URL_TTL_SECONDS from now. */
  sign(companyId: CompanyId, mediaId: Types.ObjectId): { url: string; expiresAt: Date } {
    const expires = this.expiryFrom(this.clock.now());
    return { url: `${SIGNED_MEDIA_PATH}/${this.tokens.make(companyId, mediaId, expires)}`, expiresAt: new Date(expires * 1000) };
  }

  /** The file a link's token names; 403 when it was not made here as it is, 410 once it has expired. */
  verify(token: string): LinkedMedia {
    const ids = this.tokens.open(token);
    if (!ids) throw new ForbiddenException(INVALID_LINK_MESSAGE);
    const { expires } = ids;
    const secondsLeft = expires - Math.floor(this.clock.now().getTime() / 1000);
    if (secondsLeft <= 0) {
      throw new GoneException(`This media link expired at ${new Date(expires * 1000).toISOString()}: read the message again for a fresh downloadUrl`);
    }
    return {
      companyId: ids.companyId,
      mediaId: ids.id,
      secondsLeft,
    };
  }

  /** A message of the company as a REST answer shows it: its media with a download link (events never carry one). */
  forMessage(companyId: CompanyId, message: MessageView): MessageView {
    if (!message.media) return message;
    const { url, expiresAt } = this.sign(companyId, new Types.ObjectId(message.media.id));
    return { ...message, media: { ...message.media, downloadUrl: url, downloadUrlExpiresAt: expiresAt.toISOString() } };
  }

  /**
   * The expiry of a link made at `now`: now + TTL rounded up to a step (at most 5 minutes, a tenth of the TTL), so
   * that the same file gets the same link in every answer of that step and a browser's cache keeps serving it. A
   * link thus lives between the TTL and the TTL plus one step.
   */
  private expiryFrom(now: Date): number {
    const earliest = Math.ceil(now.getTime() / 1000) + this.ttlSeconds;
    return Math.ceil(earliest / this.stepSeconds) * this.stepSeconds;
  }
}
