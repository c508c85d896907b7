import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../../src/extension-points.js';

/** One closed conversation, summed up once (keyed by the `conversation.closed` event that closed it). */
@Schema({ collection: 'example_conversation_digests', timestamps: true })
export class ConversationDigest {
  /** The event's id: a retried or republished event finds its digest already there. */
  @Prop({ required: true })
  eventId: string;

  @Prop({ required: true })
  conversationId: string;

  @Prop({ type: String, default: null })
  subject: string | null;

  @Prop({ type: String, default: null })
  closeReason: string | null;

  /** Seconds from opening to closing. */
  @Prop({ required: true })
  durationSeconds: number;
}

export const ConversationDigestSchema = SchemaFactory.createForClass(ConversationDigest);
ConversationDigestSchema.plugin(tenantScopePlugin);
ConversationDigestSchema.index({ companyId: 1, eventId: 1 }, { unique: true });
