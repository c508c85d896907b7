import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, type Types } from 'mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { LaneFields } from './lane.schema.js';

/**
 * One deadline of one company (DurableTimers): a lane due at `dueAt`, so that exactly one worker of the deployment
 * fires it, and a crashed firing is taken over when its lease expires.
 */
@Schema({ collection: 'timers', versionKey: false, timestamps: true })
export class DurableTimer extends LaneFields {
  /** `<kind>:<key>`: one timer per kind and key, which setting it again moves. */
  @Prop({ type: String, required: true })
  _id: string;

  @Prop({ required: true })
  kind: string;

  /** When it fires; `nextDueAt` is the same, or later while a failed firing waits for its retry. */
  @Prop({ type: Date, required: true })
  dueAt: Date;

  /** What the kind's handler needs to act (ids, the deadline's subject); small. */
  @Prop({ type: SchemaTypes.Mixed, default: {} })
  payload: Record<string, unknown>;

  /** Failed firings in a row; the timer is dropped (logged as an error) once they reach the limit. */
  @Prop({ required: true, default: 0 })
  failures: number;

  declare companyId: Types.ObjectId;
}

export const DurableTimerSchema = SchemaFactory.createForClass(DurableTimer);
DurableTimerSchema.plugin(tenantScopePlugin);
// The worker's claim: timers due longest first.
DurableTimerSchema.index({ nextDueAt: 1 }, { sparse: true });
// Moving every timer of a kind of one company at once (DurableTimers.dueAllNow).
DurableTimerSchema.index({ companyId: 1, kind: 1 });
