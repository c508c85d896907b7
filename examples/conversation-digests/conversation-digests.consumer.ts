import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { ConsumesEvents, isDuplicateKeyError, TenantRepository, type AnyDomainEvent, type EventHandler } from '../../src/extension-points.js';
import { ConversationDigest } from './conversation-digest.schema.js';

@Injectable()
export class ConversationDigestsRepository extends TenantRepository<ConversationDigest> {
  constructor(@InjectModel(ConversationDigest.name) model: Model<ConversationDigest>) {
    super(model);
  }
}

/**
 * A consumer of the event log: a digest of every closed conversation. It runs outside the request that closed the
 * conversation, at least once per event; the digest's unique event id makes a second run a no-op.
 */
@Injectable()
@ConsumesEvents({ name: 'example-conversation-digests', types: ['conversation.closed'] })
export class ConversationDigestsConsumer implements EventHandler {
  constructor(private readonly digests: ConversationDigestsRepository) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    for (const event of events) {
      if (event.type !== 'conversation.closed') continue;
      const { conversation, reason } = event.data;
      const durationSeconds = Math.round((Date.parse(conversation.closedAt ?? event.occurredAt.toISOString()) - Date.parse(conversation.createdAt)) / 1000);
      try {
        await this.digests.create(companyId, { eventId: event.id, conversationId: conversation.id, subject: conversation.subject, closeReason: reason, durationSeconds });
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
      }
    }
  }
}
