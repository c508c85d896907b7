import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { RateLimitCounter } from './rate-limit-counter.schema.js';
import type { CounterIncrement, CounterStore } from './shared-window-throttler.storage.js';

/** The shared rate-limit counts: one batched upsert of the increments, then one read of the totals. */
@Injectable()
export class RateLimitCountersRepository implements CounterStore {
  constructor(@InjectModel(RateLimitCounter.name) private readonly model: Model<RateLimitCounter>) {}

  async sync(increments: CounterIncrement[], ids: string[]): Promise<Map<string, number>> {
    if (increments.length > 0) {
      await this.model.bulkWrite(
        increments.map(({ id, hits, expiresAt }) => ({
          updateOne: { filter: { _id: id }, update: { $inc: { hits }, $setOnInsert: { expiresAt } }, upsert: true },
        })),
        { ordered: false },
      );
    }
    const counters = await this.model.find({ _id: { $in: ids } }, { hits: 1 }).lean().exec();
    return new Map(counters.map((counter) => [counter._id, counter.hits]));
  }
}
