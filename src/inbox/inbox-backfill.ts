import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { DataMigrations } from '../database/migrations/data-migrations.js';
import { lastMessageOf } from '../messages/message-preview.js';
import { MessagesRepository } from '../messages/messages.repository.js';

const BATCH = 500;

/**
 * Conversations stored before the inbox's fields existed get them once (DataMigrations): `lastActivityAt` (their last
 * message's time, else their creation), `inboundCount` (their inbound messages counted) and `lastMessage` (their newest
 * message). Until then the lists' activity order and unread counts would not know them. Safe to run twice: it fills
 * in only what is missing.
 */
@Injectable()
export class InboxBackfill implements OnApplicationBootstrap {
  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly messages: MessagesRepository,
    private readonly migrations: DataMigrations,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.migrations.runOnce('conversations.inbox', async () => {
      for (;;) {
        const batch = await this.conversations.withoutInboxFields(BATCH);
        if (batch.length === 0) return;
        for (const { _id, companyId, createdAt, lastMessageAt } of batch) {
          const [inboundCount, newest] = await Promise.all([
            this.messages.countPlain(companyId, { conversationId: _id, direction: 'inbound' }),
            this.messages.newestOf(companyId, _id),
          ]);
          await this.conversations.fillInboxFields(companyId, _id, {
            lastActivityAt: lastMessageAt ?? createdAt,
            inboundCount,
            lastMessage: newest ? lastMessageOf(newest._id, newest, newest.createdAt) : null,
          });
        }
      }
    });
  }
}
