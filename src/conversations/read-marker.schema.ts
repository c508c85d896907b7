import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, Types } from 'mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

/**
 * How far one agent has read one conversation (contract section 14): the newest message it read, and the
 * conversation's inbound-message counter as of that message, so that its unread count is a subtraction. One per
 * agent and conversation; it only moves forward, along the messages' order (time, then id).
 */
@Schema({ collection: 'conversation_read_markers', timestamps: true })
export class ReadMarker {
  @Prop({ type: SchemaTypes.ObjectId, required: true })
  agentId: Types.ObjectId;

  @Prop({ type: SchemaTypes.ObjectId, required: true })
  conversationId: Types.ObjectId;

  @Prop({ type: SchemaTypes.ObjectId, required: true })
  messageId: Types.ObjectId;

  /** The message's time: with its id, the marker's place in the conversation. */
  @Prop({ type: Date, required: true })
  messageAt: Date;

  /** The conversation's inboundCount once that message was recorded: inbound messages beyond it are unread. */
  @Prop({ type: Number, required: true })
  readCount: number;

  /** When the agent read up to it. */
  @Prop({ type: Date, required: true })
  readAt: Date;
}

/** The fields an agent's view of a conversation needs of its marker (what a list page reads of the markers). */
export const READ_MARKER_VIEW_FIELDS = { conversationId: 1, readCount: 1, readAt: 1 } as const;

export const ReadMarkerSchema = SchemaFactory.createForClass(ReadMarker);
ReadMarkerSchema.plugin(tenantScopePlugin);
// One per agent and conversation; a list page reads its conversations' markers for the caller in one `$in`.
ReadMarkerSchema.index({ companyId: 1, agentId: 1, conversationId: 1 }, { unique: true });
