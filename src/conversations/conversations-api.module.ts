import { Module } from '@nestjs/common';
import { InboxModule } from '../inbox/inbox.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { ConversationBulkActions } from './bulk/conversation-bulk-actions.js';
import { ConversationBulkController } from './bulk/conversation-bulk.controller.js';
import { ConversationsController } from './conversations.controller.js';
import { ConversationsModule } from './conversations.module.js';
import { ConversationSnoozeController } from './snooze/conversation-snooze.controller.js';

/**
 * The /v1/conversations routes. Kept apart from ConversationsModule (schema, repository, rules), which messages
 * import: starting a conversation may send its first message, and one module holding both would make an import cycle.
 */
@Module({
  imports: [ConversationsModule, MessagesModule, InboxModule],
  controllers: [ConversationsController, ConversationSnoozeController, ConversationBulkController],
  providers: [ConversationBulkActions],
})
export class ConversationsApiModule {}
