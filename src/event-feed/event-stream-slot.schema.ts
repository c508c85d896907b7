import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

/**
 * One open event stream of a company, in whichever process serves it, so that EVENT_STREAMS_PER_COMPANY and EVENT_STREAMS_PER_PRINCIPAL hold
 * across the deployment. The process renews its streams' leases while they are open and removes them when they
 * close; a process killed without closing them leaves leases that lapse (and are then neither counted nor kept).
 */
@Schema({ collection: 'event_streams', versionKey: false })
export class EventStreamSlot {
  /** `str_...`, the stream's id in the logs. */
  @Prop({ type: String, required: true })
  _id: string;

  /** The process serving it (LaneWorker.id: host, pid and a random part). */
  @Prop({ required: true })
  owner: string;

  /** Who opened it (`agent:<id>` or `key:<id>`), for EVENT_STREAMS_PER_PRINCIPAL. */
  @Prop({ required: true })
  principal: string;

  @Prop({ required: true })
  leaseUntil: Date;
}

export const EventStreamSlotSchema = SchemaFactory.createForClass(EventStreamSlot);
EventStreamSlotSchema.plugin(tenantScopePlugin);
// Counting a company's open streams, and one principal's.
EventStreamSlotSchema.index({ companyId: 1, leaseUntil: 1 });
EventStreamSlotSchema.index({ companyId: 1, principal: 1, leaseUntil: 1 });
EventStreamSlotSchema.index({ leaseUntil: 1 }, { expireAfterSeconds: 0 });
