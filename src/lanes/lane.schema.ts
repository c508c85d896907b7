import { Prop } from '@nestjs/mongoose';
import type { Types } from 'mongoose';

/** The lease of a free lane: always a date, so the claim filter is a plain range. */
export const LANE_FREE = new Date(0);

/**
 * What makes a document a lane: ordered work that at most one worker holds at a time, through a lease
 * (owner + expiry) on the document itself, with a hint of when it is next due and a version bumped by
 * whoever queues work from outside the lane. Schemas of lanes extend this class (webhooks, event
 * consumers, scheduled jobs) and declare an index on `nextDueAt` for the claim.
 */
export class LaneFields {
  /** Bumped by every change to the lane's pending work made outside the lane (see LaneStore.markDue). */
  @Prop({ required: true, default: 0 })
  queueVersion: number;

  /** No later than when the lane's work is next due; absent when it has none. */
  @Prop({ type: Date })
  nextDueAt?: Date;

  @Prop({ type: String, default: null })
  leaseOwner: string | null;

  @Prop({ type: Date, required: true, default: () => LANE_FREE })
  leaseUntil: Date;
}

/** A lane as its worker claimed it: the document as it stood at the claim, lease included. */
export type ClaimedLane<T> = T &
  LaneFields & { _id: Types.ObjectId | string; companyId?: Types.ObjectId; leaseOwner: string };
