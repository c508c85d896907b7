import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MediaLinksModule } from '../media/media-links.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { InboxBackfill } from './inbox-backfill.js';
import { InboxService } from './inbox.service.js';
import { MessageSearchController } from './message-search.controller.js';
import { MessageSearchService } from './message-search.service.js';

/**
 * The agent inbox (contract section 14): conversations as the calling agent sees them (read markers, unread counts),
 * and message search. Its conversation routes are ConversationsController's (ConversationsApiModule).
 */
@Module({
  imports: [ConversationsModule, MessagesModule, MediaLinksModule],
  controllers: [MessageSearchController],
  providers: [InboxService, MessageSearchService, InboxBackfill],
  exports: [InboxService],
})
export class InboxModule {}
