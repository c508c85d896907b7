import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter, Types, UpdateQuery } from 'mongoose';
import { AppConfig } from '../config/app-config.js';
import { duplicateInsertIndexes } from '../database/mongo-errors.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { WebhookDelivery, type DeliveryAttempt } from './webhook-delivery.schema.js';

/** Payload bytes per insert of new deliveries: serializing one insert then takes a few milliseconds. */
const INSERT_CHUNK_BYTES = 512 * 1024;

/** `deliveries` in runs of consecutive ones whose payloads add up to about `maxBytes` (at least one each). */
function chunksOf(deliveries: NewDelivery[], maxBytes: number): NewDelivery[][] {
  const chunks: NewDelivery[][] = [];
  let chunk: NewDelivery[] = [];
  let bytes = 0;
  for (const delivery of deliveries) {
    if (chunk.length > 0 && bytes + delivery.payload.length > maxBytes) {
      chunks.push(chunk);
      chunk = [];
      bytes = 0;
    }
    chunk.push(delivery);
    bytes += delivery.payload.length;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** The delivery log keeps the latest attempts of a delivery, however often it is redelivered. */
export const MAX_LOGGED_ATTEMPTS = 50;

/** How one attempt ends for the delivery: done, or pending again until `nextAttemptAt`. */
export type AttemptResult =
  | { status: 'succeeded' | 'failed' }
  | { status: 'pending'; nextAttemptAt: Date };

/** A delivery as the fan-out records it: the event for the webhook, due at once. */
export type NewDelivery = Pick<WebhookDelivery, 'webhookId' | 'eventId' | 'type' | 'payload' | 'sequence' | 'nextAttemptAt' | 'trace'>;

/** An attempt made on a delivery as the worker read it, and how it ends for the delivery. */
export interface RecordedAttempt {
  delivery: Stored<WebhookDelivery>;
  attempt: DeliveryAttempt;
  result: AttemptResult;
}

/** Pending again, due `now`, with a fresh round of retries. */
const requeued = (now: Date): UpdateQuery<WebhookDelivery> => ({
  $set: { status: 'pending', attemptCount: 0, nextAttemptAt: now, completedAt: null },
  $unset: { expireAt: 1 },
});

@Injectable()
export class WebhookDeliveriesRepository extends TenantRepository<WebhookDelivery> {
  /** How long a finished delivery is kept (0: for ever). */
  private readonly retentionMs: number;

  constructor(@InjectModel(WebhookDelivery.name) model: Model<WebhookDelivery>, config: AppConfig) {
    super(model);
    this.retentionMs = config.webhookDeliveryRetentionDays * 86_400_000;
  }

  /**
   * Inserts the deliveries not recorded yet: one already there for its webhook and event keeps its id and state.
   * The rows are complete as the fan-out builds them (every field a new delivery has, written here), so they are
   * inserted without Mongoose's per-document hydration, which the fan-out would pay per event and webhook.
   * In inserts of at most INSERT_CHUNK_BYTES of payload: the driver serializes an insert's documents in one go,
   * and a batch of 200 events for 100 webhooks (20 000 deliveries, tens of MB) would hold the event loop for
   * a large part of a second, delaying every other company's requests (contract section 18).
   */
  async insertNew(companyId: CompanyId, deliveries: NewDelivery[]): Promise<void> {
    const company = this.tenant(companyId);
    const now = new Date();
    for (const chunk of chunksOf(deliveries, INSERT_CHUNK_BYTES)) {
      try {
        await this.model.insertMany(
          chunk.map((delivery) => ({
            ...delivery,
            companyId: company,
            status: 'pending',
            attemptCount: 0,
            attempts: [],
            completedAt: null,
            createdAt: now,
            updatedAt: now,
          })),
          { ordered: false, lean: true },
        );
      } catch (error) {
        if (!duplicateInsertIndexes(error, chunk.length)) throw error;
      }
    }
  }

  /**
   * The webhook's `limit` oldest pending deliveries in event order: its lane attempts them from the first (the head).
   * Only what an attempt needs: of the attempts logged so far, which a failing receiver's deliveries accumulate, the
   * last one at most (whether there are any).
   */
  async pendingInOrder(companyId: CompanyId, webhookId: Types.ObjectId, limit: number): Promise<Stored<WebhookDelivery>[]> {
    const projection = { payload: 1, attemptCount: 1, nextAttemptAt: 1, sequence: 1, eventId: 1, trace: 1, attempts: { $slice: -1 } };
    return this.findPlain(companyId, { webhookId, status: 'pending' }, { sort: { sequence: 1 }, limit, projection });
  }

  /**
   * Records attempts, in one write, each on a delivery still as the worker read it (pending, same attemptCount):
   * one deleted or queued again meanwhile is left alone (nothing adds to a delivery's attempts without counting it,
   * so one read without any still has none). False when any of them was not recorded. Written through
   * the driver: every value is already of its stored type (the hot write of webhook delivery, one per attempt,
   * where Mongoose's casting of each update cost more than the rest of the write).
   */
  async recordAttempts(companyId: CompanyId, attempts: RecordedAttempt[]): Promise<boolean> {
    if (attempts.length === 0) return true;
    const updatedAt = new Date();
    const outcome = await this.model.collection.bulkWrite(
      attempts.map(({ delivery, attempt, result }) => {
        const done = result.status !== 'pending';
        const expiry = done && this.retentionMs > 0 ? { expireAt: new Date(attempt.at.getTime() + this.retentionMs) } : {};
        return {
          updateOne: {
            filter: this.scope(companyId, { _id: delivery._id, status: 'pending', attemptCount: delivery.attemptCount }),
            update: {
              // The first attempt of a delivery starts its log; later ones join it, the latest MAX_LOGGED_ATTEMPTS kept.
              ...(delivery.attempts?.length === 0 ? {} : { $push: { attempts: { $each: [attempt], $slice: -MAX_LOGGED_ATTEMPTS } } }),
              $set: {
                ...(delivery.attempts?.length === 0 ? { attempts: [attempt] } : {}),
                status: result.status,
                // The filter pins the count read, so setting it is incrementing it.
                attemptCount: delivery.attemptCount + 1,
                nextAttemptAt: done ? null : result.nextAttemptAt,
                completedAt: done ? attempt.at : null,
                updatedAt,
                ...expiry,
              },
            },
          },
        };
      }) as never,
      { ordered: false },
    );
    return outcome.modifiedCount === attempts.length;
  }

  /** Queues deliveries for an attempt now, with a fresh round of retries; answers how many. */
  async requeue(companyId: CompanyId, filter: QueryFilter<WebhookDelivery>, now: Date): Promise<number> {
    return this.updateMany(companyId, filter, requeued(now));
  }

  /** Queues the first delivery matching `filter` like `requeue`, in one write; answers it as updated, or null when none matched. */
  async requeueOne(companyId: CompanyId, filter: QueryFilter<WebhookDelivery>, now: Date): Promise<Stored<WebhookDelivery> | null> {
    return this.updateOne(companyId, filter, requeued(now));
  }
}

