import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Types } from 'mongoose';
import { ScheduledJobs } from '../lanes/scheduled-jobs.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { MediaStorage, type ExpiredUpload } from './media-storage.js';

/** How often the deployment looks for expired uploads: an upload goes within this of its expiry. */
export const UPLOAD_EXPIRY_EVERY_MS = 30_000;
/** Uploads looked at per read, and reads per run: a backlog is worked off over a few runs, never in one long one. */
const BATCH = 200;
const MAX_BATCHES = 10;

/**
 * Removes the uploads no message referred to by their expiry (MEDIA_UPLOAD_TTL_HOURS after the upload), files and
 * chunks. A scheduled job on the shared lanes, so one process runs it at a time and a crashed run is taken over.
 * Each run reads the expired uploads through their expiry's index, the longest expired first; those a message
 * refers to stop expiring, the others are removed, each only if it is still expired (MediaStorage.removeExpired):
 * a message about to refer to one holds it first (MediaUploadsService.attach).
 */
@Injectable()
export class MediaUploadExpiry implements OnModuleInit {
  private readonly logger = new Logger(MediaUploadExpiry.name);

  constructor(
    private readonly storage: MediaStorage,
    private readonly messages: MessagesRepository,
    private readonly jobs: ScheduledJobs,
  ) {}

  onModuleInit(): void {
    this.jobs.schedule('media-upload-expiry', UPLOAD_EXPIRY_EVERY_MS, async () => {
      const removed = await this.sweep(new Date());
      if (removed > 0) this.logger.log(`Removed ${removed} upload(s) no message referred to`);
    });
  }

  /** Works off the uploads expired at `now`; answers how many were removed. */
  async sweep(now: Date): Promise<number> {
    let removed = 0;
    for (let batch = 0; batch < MAX_BATCHES; batch += 1) {
      const expired = await this.storage.expired(now, BATCH);
      removed += await this.settle(expired, now);
      if (expired.length < BATCH) break;
    }
    return removed;
  }

  private async settle(expired: ExpiredUpload[], now: Date): Promise<number> {
    const byCompany = new Map<string, Types.ObjectId[]>();
    for (const { id, companyId } of expired) byCompany.set(companyId.toHexString(), [...(byCompany.get(companyId.toHexString()) ?? []), id]);
    const used = new Set<string>();
    for (const [companyId, ids] of byCompany) {
      for (const id of await this.messages.mediaInUse(companyId, ids)) used.add(id.toHexString());
    }
    await this.storage.keep(expired.filter(({ id }) => used.has(id.toHexString())).map(({ id }) => id));
    let removed = 0;
    for (const { id } of expired) {
      if (!used.has(id.toHexString()) && (await this.storage.removeExpired(id, now))) removed += 1;
    }
    return removed;
  }
}
