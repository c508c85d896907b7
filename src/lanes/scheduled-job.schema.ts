import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { LaneFields } from './lane.schema.js';

/** A periodic job of the whole deployment (ScheduledJobs): one lane, so one process runs it at a time. */
@Schema({ collection: 'scheduled_jobs', versionKey: false })
export class ScheduledJob extends LaneFields {
  /** The job's name. */
  @Prop({ type: String, required: true })
  _id: string;
}

export const ScheduledJobSchema = SchemaFactory.createForClass(ScheduledJob);
ScheduledJobSchema.index({ nextDueAt: 1 }, { sparse: true });
