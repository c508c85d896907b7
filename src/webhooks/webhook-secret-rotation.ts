import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { UnreadableSecretError, WebhookSecretBox } from './webhook-secret-box.js';
import { Webhook } from './webhook.schema.js';

const BATCH = 100;

/**
 * Once at start-up: re-seals under the current WEBHOOK_SECRET_KEYS key every webhook secret sealed under
 * an older key or under the JWT_SECRET derivation, so that the old key can be dropped from the list (or
 * JWT_SECRET rotated) afterwards. Each write is conditional on the value read, so processes starting at
 * the same time do each secret once. A secret no listed key opens is left as it is, with a warning.
 * Cross-tenant by nature: it runs for every company.
 */
@Injectable()
export class WebhookSecretRotation implements OnApplicationBootstrap {
  private readonly logger = new Logger('Webhooks');

  constructor(
    @InjectModel(Webhook.name) private readonly webhooks: Model<Webhook>,
    private readonly secrets: WebhookSecretBox,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const current = this.secrets.currentKeyId;
    if (current === undefined) return;
    const resealed = await this.resealAll(current);
    if (resealed > 0) this.logger.log(`Re-sealed ${resealed} webhook secret(s) under WEBHOOK_SECRET_KEYS key "${current}"`);
  }

  /** Answers how many secrets it re-sealed. */
  async resealAll(current: string): Promise<number> {
    // Key ids are letters, digits, `_` and `-`: nothing to escape in a pattern.
    const stale = { secret: { $not: new RegExp(`^v2\\.${current}\\.`) } };
    let resealed = 0;
    let unreadable = 0;
    for (let after: unknown = null; ; ) {
      const batch = await this.webhooks
        .find(after === null ? stale : { ...stale, _id: { $gt: after } }, { secret: 1, companyId: 1 })
        .sort({ _id: 1 })
        .limit(BATCH)
        .setOptions({ [CROSS_TENANT]: true })
        .lean<Array<Pick<Stored<Webhook>, '_id' | 'companyId' | 'secret'>>>()
        .exec();
      for (const webhook of batch) {
        try {
          const sealed = this.secrets.seal(this.secrets.open(webhook.secret));
          const { modifiedCount } = await this.webhooks
            .updateOne({ _id: webhook._id, companyId: webhook.companyId, secret: webhook.secret }, { $set: { secret: sealed } }, { timestamps: false })
            .exec();
          resealed += modifiedCount;
        } catch (error) {
          if (!(error instanceof UnreadableSecretError)) throw error;
          unreadable += 1;
        }
      }
      if (batch.length < BATCH) break;
      after = batch[batch.length - 1]._id;
    }
    if (unreadable > 0) this.logger.warn(`${unreadable} webhook secret(s) open with no configured key: left as they are`);
    return resealed;
  }
}
