import { Module } from '@nestjs/common';
import { ContactsModule } from '../contacts/contacts.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MediaModule } from '../media/media.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { InboundMessagesController } from './inbound-messages.controller.js';
import { InboundMessagesService } from './inbound-messages.service.js';

/** Interface B's inbound channel messages. */
@Module({
  imports: [ContactsModule, ConversationsModule, MessagesModule, MediaModule],
  controllers: [InboundMessagesController],
  providers: [InboundMessagesService],
  exports: [InboundMessagesService],
})
export class InboundModule {}
