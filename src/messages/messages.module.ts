import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AgentsModule } from '../agents/agents.module.js';
import { CannedResponsesModule } from '../canned-responses/canned-responses.module.js';
import { CompaniesModule } from '../companies/companies.module.js';
import { ChannelsModule } from '../channels/channels.module.js';
import { ContactsModule } from '../contacts/contacts.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MediaLinksModule } from '../media/media-links.module.js';
import { MessageTemplatesModule } from '../message-templates/message-templates.module.js';
import { DeliveryReceiptsController } from './delivery-receipts.controller.js';
import { DeliveryReceiptsService } from './delivery-receipts.service.js';
import { Message, MessageSchema } from './message.schema.js';
import { MessageComposer } from './message-composer.js';
import { MessagesController } from './messages.controller.js';
import { MessageHistory } from './message-history.js';
import { MessagesRepository } from './messages.repository.js';
import { MessagesService } from './messages.service.js';
import { PrivateNotes } from './private-notes.js';
import { ProactiveMessagesController } from './proactive-messages.controller.js';
import { ProactiveMessagesService } from './proactive-messages.service.js';

@Module({
  imports: [
    MongooseModule.forFeature([{ name: Message.name, schema: MessageSchema }]),
    ConversationsModule,
    AgentsModule,
    ContactsModule,
    CompaniesModule,
    CannedResponsesModule,
    ChannelsModule,
    MessageTemplatesModule,
    MediaLinksModule,
  ],
  controllers: [MessagesController, ProactiveMessagesController, DeliveryReceiptsController],
  providers: [MessagesRepository, MessagesService, MessageHistory, DeliveryReceiptsService, PrivateNotes, MessageComposer, ProactiveMessagesService],
  exports: [MessagesService, MessagesRepository, PrivateNotes],
})
export class MessagesModule {}
