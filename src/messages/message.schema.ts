import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, Types } from 'mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';

/** `internal`: a private note, never sent to the contact (contract section 15). */
export const MESSAGE_DIRECTIONS = ['inbound', 'outbound', 'internal'] as const;
export type MessageDirection = (typeof MESSAGE_DIRECTIONS)[number];
/** `template`: an approved message template sent by name, its `text` the rendered body (contract section 17). */
export const MESSAGE_TYPES = ['text', 'image', 'video', 'audio', 'document', 'template'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];
export const MEDIA_TYPES = ['image', 'video', 'audio', 'document'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];
export const SENDER_TYPES = ['contact', 'agent', 'bot'] as const;
export type SenderType = (typeof SENDER_TYPES)[number];
/** Where an outbound message stands on its channel (contract section 12); the rules are in delivery-status.ts. */
export const DELIVERY_STATUSES = ['pending', 'sent', 'delivered', 'read', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The stored file of a media message (GridFS); `url` is derived from the id when shown. */
export interface MessageMedia {
  id: Types.ObjectId;
  fileName: string;
  mimeType: string;
  size: number;
}

/** Which template a `template` message sent, and with what: the connector sends it to the channel by name. */
export interface MessageTemplateUse {
  id: Types.ObjectId;
  name: string;
  language: string;
  variables: string[];
}

export interface DeliveryError {
  code: string;
  message: string;
}

/** A message's longest text; what renders a text (a canned response, a template) must fit in it. */
export const MAX_MESSAGE_TEXT_LENGTH = 4096;

/** What the channel reported of an outbound message; `pending` from when it is stored. */
@Schema({ _id: false })
export class MessageDelivery {
  @Prop({ type: String, enum: DELIVERY_STATUSES, required: true })
  status: DeliveryStatus;

  /** When the status was reached: the report's `occurredAt` (kept in order), else when the report arrived. */
  @Prop({ type: Date, required: true })
  updatedAt: Date;

  /** The channel's own id of the message, as a report gave it. */
  @Prop({ type: String })
  externalId?: string;

  /** Why it failed, as the channel said (only on `failed`). */
  @Prop({ type: Object })
  error?: DeliveryError;

  /**
   * When it reached `delivered`, or `read` without a delivered report first (read implies delivered). Read and
   * failed are final, so their time is `updatedAt`; delivered is the one step a later one overwrites (metrics).
   */
  @Prop({ type: Date })
  deliveredAt?: Date;
}
const MessageDeliverySchema = SchemaFactory.createForClass(MessageDelivery);

/** One message of a conversation (contract section 4). */
@Schema({ collection: 'messages', timestamps: true })
export class Message extends EventSource {
  // SchemaTypes.ObjectId: given Types.ObjectId, Mongoose 9 declares a Mixed path that never casts string ids.
  @Prop({ type: SchemaTypes.ObjectId, required: true })
  conversationId: Types.ObjectId;

  @Prop({ type: String, enum: MESSAGE_DIRECTIONS, required: true })
  direction: MessageDirection;

  /**
   * Its conversation's channel, which never changes: a message carries it so that the channel's own message ids
   * (`externalId`) are unique per company and channel without a lookup of the conversation.
   */
  @Prop({ type: String })
  channel?: string;

  @Prop({ type: String, enum: MESSAGE_TYPES, required: true, default: 'text' })
  type: MessageType;

  @Prop({ type: String, maxlength: MAX_MESSAGE_TEXT_LENGTH, default: null })
  text: string | null;

  @Prop({ type: String, maxlength: 1024, default: null })
  caption: string | null;

  @Prop({ type: Object, default: null })
  media: MessageMedia | null;

  /** Only on `template` messages. */
  @Prop({ type: Object })
  template?: MessageTemplateUse;

  @Prop({ type: String, enum: SENDER_TYPES, required: true })
  senderType: SenderType;

  /** The contact's, agent's or flow's id; null for an anonymous bot. */
  @Prop({ type: SchemaTypes.ObjectId, default: null })
  senderId: Types.ObjectId | null;

  /**
   * The conversation's inboundCount once this message was recorded (this one included when inbound): a read marker
   * at this message leaves the inbound messages beyond that count unread.
   */
  @Prop({ type: Number })
  inboundCount?: number;

  /** Inbound: the channel's own id of the message, as the connector sent it; a repeat is the same message. */
  @Prop({ type: String })
  externalId?: string;

  /** Outbound only. */
  @Prop({ type: MessageDeliverySchema })
  delivery?: MessageDelivery;

  /** A private note (`direction: internal`); false on every other message (absent on those stored before notes). */
  @Prop({ type: Boolean, default: false })
  private?: boolean;

  /** A note's mentioned agents (active agents of the company when it was written); absent on other messages. */
  @Prop({ type: [SchemaTypes.ObjectId], default: undefined })
  mentions?: Types.ObjectId[];

  /**
   * What makes a repeated send the same message (a sparse unique index), so a retried flow step sends once:
   * `flow:<execution id>:<step>`, unique within the company (the index starts with companyId, the shard key: docs/scaling.md).
   */
  @Prop({ type: String })
  dedupeKey?: string;
}

export const MessageSchema = SchemaFactory.createForClass(Message);
MessageSchema.plugin(tenantScopePlugin);
MessageSchema.index({ companyId: 1, conversationId: 1, createdAt: -1, _id: -1 });
MessageSchema.index({ companyId: 1, createdAt: 1 });
// A conversation's notes alone. Partial, so that only notes pay for it: the messages without notes walk the
// { companyId, conversationId, createdAt, _id } index, past the notes among them.
MessageSchema.index(
  { companyId: 1, conversationId: 1, private: 1, createdAt: -1, _id: -1 },
  { partialFilterExpression: { private: true }, name: 'notes_of_a_conversation' },
);
indexPendingEvents(MessageSchema);
MessageSchema.index({ companyId: 1, dedupeKey: 1 }, { unique: true, partialFilterExpression: { dedupeKey: { $type: 'string' } } });
// Inbound messages the connector identified: one per company, channel and channel message id.
MessageSchema.index(
  { companyId: 1, channel: 1, externalId: 1 },
  { unique: true, partialFilterExpression: { externalId: { $type: 'string' } }, name: 'one_inbound_message_per_channel_external_id' },
);
/** A stored file belongs to one message: a second message with it is refused, even when both are written at once. */
export const ONE_MESSAGE_PER_MEDIA = 'one_message_per_media';
MessageSchema.index({ companyId: 1, 'media.id': 1 }, { unique: true, partialFilterExpression: { 'media.id': { $type: 'objectId' } }, name: ONE_MESSAGE_PER_MEDIA });
// Delivery metrics: read and failed (final) by the time they were reached; delivered by deliveredAt.
MessageSchema.index({ companyId: 1, 'delivery.status': 1, 'delivery.updatedAt': 1 });
MessageSchema.index({ companyId: 1, 'delivery.deliveredAt': 1 });
// Message search (contract section 14): a text index led by the company, so MongoDB reads only the company's keys.
// No language: every word is indexed as written (folded), none dropped as a stop word nor stemmed, as a search of
// words the agents typed expects; no document field picks another language (the override names a field messages lack).
MessageSchema.index(
  { companyId: 1, text: 'text', caption: 'text' },
  { name: 'message_search', default_language: 'none', language_override: 'searchLanguage' },
);
