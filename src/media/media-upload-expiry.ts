import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { Types } from 'mongoose';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { MediaStorage } from './media-storage.js';

/** The durable timer of an upload waiting for its message, keyed by the upload's id. */
export const UPLOAD_EXPIRY_TIMER = 'media-upload-expiry';

/** Sets the timer that removes upload `id` at `expiresAt` unless a message refers to it by then. */
export function expireUploadAt(timers: DurableTimers, companyId: CompanyId, id: Types.ObjectId, expiresAt: Date): Promise<void> {
  return timers.set(companyId, UPLOAD_EXPIRY_TIMER, id.toHexString(), expiresAt);
}

/**
 * Removes an upload no message referred to by its expiry (MEDIA_UPLOAD_TTL_HOURS after the upload), file and chunks:
 * each upload has a durable timer, set before its bytes are stored (GridFsStorageEngine), so a crash never leaves one
 * behind. When the timer fires: an upload a message refers to stops expiring; one held for a message meanwhile
 * (MediaUploadsService.attach moves its expiry) gets its timer moved; the others are removed if still expired.
 */
@Injectable()
export class MediaUploadExpiry implements OnModuleInit {
  private readonly logger = new Logger(MediaUploadExpiry.name);

  constructor(
    private readonly storage: MediaStorage,
    private readonly messages: MessagesRepository,
    private readonly timers: DurableTimers,
  ) {}

  onModuleInit(): void {
    this.timers.register(UPLOAD_EXPIRY_TIMER, (timer: FiredTimer) => this.fire(timer));
  }

  private async fire(timer: FiredTimer): Promise<void> {
    if (!Types.ObjectId.isValid(timer.key)) return;
    if (await this.expire(timer.companyId, new Types.ObjectId(timer.key), timer.firedAt)) {
      this.logger.log(`Removed upload ${timer.key}: no message referred to it`);
    }
  }

  /** Settles upload `id` at `now`: answers whether it was removed. */
  async expire(companyId: CompanyId, id: Types.ObjectId, now: Date): Promise<boolean> {
    const media = await this.storage.find(companyId, id);
    if (!media?.expiresAt) return false;
    if (media.expiresAt > now) {
      await expireUploadAt(this.timers, companyId, id, media.expiresAt);
      return false;
    }
    if ((await this.messages.byMedia(companyId, id)) !== null) {
      await this.storage.keep(id);
      return false;
    }
    return this.storage.removeExpired(id, now);
  }
}
