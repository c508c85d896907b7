import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import type { DomainEventData, DomainEventName } from './domain-events.js';

/**
 * The event log (contract section 10): each event once, append-only, numbered per company in the order it
 * was logged. Its `_id` is the event id, so logging an event again (a republish after a crash) is refused.
 */
@Schema({ collection: 'events', versionKey: false, minimize: false })
export class LoggedEvent {
  @Prop({ type: String, required: true })
  _id: string;

  @Prop({ type: String, required: true })
  type: DomainEventName;

  @Prop({ required: true })
  sequence: number;

  @Prop({ required: true })
  occurredAt: Date;

  @Prop({ required: true })
  loggedAt: Date;

  /** The channel of the conversation it is about (DomainEvent.channel); absent on entries logged before it existed. */
  @Prop({ type: String })
  channel?: string | null;

  @Prop({ type: Object, required: true })
  data: DomainEventData[DomainEventName];

  /** The traceparent kept with the event when it was staged (PendingEvent.trace); never shown to readers. */
  @Prop({ type: String })
  trace?: string;

  /** EVENT_RETENTION_DAYS after it occurred, when the TTL monitor removes it. */
  @Prop({ type: Date, required: true })
  expireAt: Date;
}

export const LoggedEventSchema = SchemaFactory.createForClass(LoggedEvent);
LoggedEventSchema.plugin(tenantScopePlugin);
// Reading a company's log in order (consumers, the feed); unique, so one sequence number is one event.
LoggedEventSchema.index({ companyId: 1, sequence: 1 }, { unique: true });
LoggedEventSchema.index({ expireAt: 1 }, { expireAfterSeconds: 0 });

/**
 * One per company: the last sequence number handed out, the last one logged (every event at or below it is
 * in the log), and the relay lease. Whoever holds the lease is the only one appending that company's events,
 * so the log never shows an event before one with a lower sequence.
 */
@Schema({ collection: 'event_log_heads', versionKey: false })
export class EventLogHead {
  @Prop({ required: true, default: 0 })
  sequence: number;

  @Prop({ required: true, default: 0 })
  logged: number;

  @Prop({ type: String, default: null })
  leaseOwner: string | null;

  @Prop({ type: Date, required: true })
  leaseUntil: Date;
}

export const EventLogHeadSchema = SchemaFactory.createForClass(EventLogHead);
EventLogHeadSchema.plugin(tenantScopePlugin);
EventLogHeadSchema.index({ companyId: 1 }, { unique: true });
