import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../../database/tenancy/tenant-scope.plugin.js';
import { LaneFields } from '../../lanes/lane.schema.js';

/**
 * One consumer's reading of one company's log (a lane): how far it has handled the log (`position`), how far
 * the log is known to reach (`head`), and its failures at `position`. At most one worker holds it at a time,
 * so each consumer handles a company's events one batch at a time, in order.
 */
@Schema({ collection: 'event_consumers', versionKey: false, timestamps: true })
export class EventConsumerLane extends LaneFields {
  /** `<consumer>:<companyId>`. */
  @Prop({ type: String, required: true })
  _id: string;

  @Prop({ required: true })
  consumer: string;

  /** The sequence of the last event handled (or skipped). */
  @Prop({ required: true, default: 0 })
  position: number;

  /** The highest sequence logged for the company among the events this consumer reads. */
  @Prop({ required: true, default: 0 })
  head: number;

  /** Failed turns in a row at `position`; the event after it is skipped once they reach the consumer's limit. */
  @Prop({ required: true, default: 0 })
  failures: number;

  /**
   * Nudges (EventConsumers.nudge) not yet answered by a turn. A nudge that lands while events are pending is owed an
   * empty batch of its own: a turn of events alone would not tell the consumer that it was nudged.
   */
  @Prop({ required: true, default: 0 })
  nudges: number;

  /** The last failure (or skip), kept for whoever looks into the consumer; a success does not clear it. */
  @Prop({ type: String, default: null })
  lastError: string | null;
}

export const EventConsumerLaneSchema = SchemaFactory.createForClass(EventConsumerLane);
EventConsumerLaneSchema.plugin(tenantScopePlugin);
// The worker's claim: lanes due longest first.
EventConsumerLaneSchema.index({ nextDueAt: 1 }, { sparse: true });
