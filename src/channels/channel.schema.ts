import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, type Types } from 'mongoose';
import { writeGenerationOf } from '../database/caching/write-generation.js';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { auditedPlugin } from '../audit/audited.js';

export const CHANNEL_TYPES = ['whatsapp', 'sms', 'email', 'web', 'api', 'other'] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];
export const MIN_REPLY_WINDOW_HOURS = 1;
export const MAX_REPLY_WINDOW_HOURS = 168;
/** WhatsApp's customer service window: free-form messages within 24 hours of the customer's last message. */
export const WHATSAPP_REPLY_WINDOW_HOURS = 24;
/** Bounds what the per-company cache of channels holds (ChannelsRepository). */
export const MAX_CHANNELS_PER_COMPANY = 100;

/**
 * A channel the company talks on (contract section 17). Conversations name it by `key` in their `channel`; a key
 * without a record has no rules of its own (no reply window), as before channels were records.
 */
@Schema({ collection: 'channels', timestamps: true })
export class Channel {
  /** Fixed at creation: the value conversations carry in `channel`. */
  @Prop({ required: true })
  key: string;

  @Prop({ type: String, enum: CHANNEL_TYPES, required: true })
  type: ChannelType;

  @Prop({ required: true, trim: true, maxlength: 200 })
  name: string;

  /** The company's own address on the channel: a phone number, an e-mail address, a page id. */
  @Prop({ type: String, trim: true, maxlength: 320, default: null })
  address: string | null;

  /** Hours after the contact's last message during which free-form messages may be sent; null: no window. */
  @Prop({ type: Number, min: MIN_REPLY_WINDOW_HOURS, max: MAX_REPLY_WINDOW_HOURS, default: null })
  replyWindowHours: number | null;

  @Prop({ required: true, default: true })
  isActive: boolean;

  /** The team whose queue conversations opened on it join (contract section 19); null: the company queue. */
  @Prop({ type: SchemaTypes.ObjectId, default: null })
  teamId: Types.ObjectId | null;
}

export const ChannelSchema = SchemaFactory.createForClass(Channel);
ChannelSchema.plugin(tenantScopePlugin);
ChannelSchema.plugin(auditedPlugin);
ChannelSchema.plugin(removablePlugin, { freed: 'key' });
/** Bumped by every write to channels in this process: ChannelsRepository's cache follows it. */
export const CHANNEL_WRITES = writeGenerationOf(ChannelSchema);
// One record per key; also the per-company read of every channel the cache makes, in key order.
ChannelSchema.index({ companyId: 1, key: 1 }, { unique: true });
ChannelSchema.index({ companyId: 1, _id: -1 });
