import { Module } from '@nestjs/common';
import { InboxModule } from '../inbox/inbox.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { ConversationsController } from './conversations.controller.js';
import { ConversationsModule } from './conversations.module.js';

/**
 * The /v1/conversations routes. Kept apart from ConversationsModule (schema, repository, rules), which messages
 * import: starting a conversation may send its first message, and one module holding both would make an import cycle.
 */
@Module({
  imports: [ConversationsModule, MessagesModule, InboxModule],
  controllers: [ConversationsController],
})
export class ConversationsApiModule {}
