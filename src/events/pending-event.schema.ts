import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { randomBytes } from 'node:crypto';
import type { Schema as MongooseSchema } from 'mongoose';
import type { DomainEventData, DomainEventName } from './domain-events.js';
import { currentTraceParent } from '../tracing/trace-context.js';
import { channelOfData } from './event-channel.js';

/** Random bytes drawn 4 KiB at a time: one draw per call cost more than the rest of an event's staging. */
let pool = Buffer.alloc(0);
let taken = 0;

export function newEventId(): string {
  if (taken + 16 > pool.length) {
    pool = randomBytes(4096);
    taken = 0;
  }
  taken += 16;
  return `evt_${pool.toString('base64url', taken - 16, taken)}`;
}

/**
 * An event written in the same single-document write as the change it describes (a standalone MongoDB has
 * no multi-document transaction), until the relay has moved it into the log (EventRelay).
 */
// minimize: false keeps the empty objects of a snapshot (a conversation's `attributes: {}`) as the API answers them.
@Schema({ _id: false, minimize: false })
export class PendingEvent {
  /** The `evt_...` id, kept by every later copy of the event (the log entry, webhook deliveries). */
  @Prop({ required: true })
  id: string;

  @Prop({ type: String, required: true })
  type: DomainEventName;

  @Prop({ required: true })
  occurredAt: Date;

  /** The channel of the conversation it is about (see DomainEvent.channel); absent on events staged before it existed. */
  @Prop({ type: String })
  channel?: string | null;

  @Prop({ type: Object, required: true })
  data: DomainEventData[DomainEventName];

  /** The W3C traceparent of the request that caused it, when traced: the lane work it causes continues that trace. */
  @Prop({ type: String })
  trace?: string;
}
const PendingEventSchema = SchemaFactory.createForClass(PendingEvent);

/**
 * The base of every schema whose writes emit events (conversations, messages, flow executions): its
 * documents carry their not-yet-logged events. Schemas extending it call `indexPendingEvents`.
 */
export class EventSource {
  @Prop({ type: [PendingEventSchema], default: undefined })
  pendingEvents?: PendingEvent[];
}

/** The sweep's index: sparse, so it holds only the few documents whose events are not logged yet. */
export function indexPendingEvents(schema: MongooseSchema): void {
  schema.index({ 'pendingEvents.occurredAt': 1 }, { sparse: true });
}

/**
 * An event of `type` about to be written with its change; `id` is given when it must be predictable (a retried step).
 * Its channel is the one of the conversation its data carries, else `channel` (events whose data has no conversation).
 */
export function stageEvent<N extends DomainEventName>(
  type: N,
  data: DomainEventData[N],
  options: { id?: string; occurredAt?: Date; channel?: string | null } = {},
): PendingEvent {
  const channel = channelOfData(data) ?? options.channel ?? null;
  const event: PendingEvent = { id: options.id ?? newEventId(), type, occurredAt: options.occurredAt ?? new Date(), channel, data };
  const traceparent = currentTraceParent();
  if (traceparent) event.trace = traceparent;
  return event;
}
