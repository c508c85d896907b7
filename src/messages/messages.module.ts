import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MediaLinksModule } from '../media/media-links.module.js';
import { DeliveryReceiptsController } from './delivery-receipts.controller.js';
import { DeliveryReceiptsService } from './delivery-receipts.service.js';
import { Message, MessageSchema } from './message.schema.js';
import { MessagesController } from './messages.controller.js';
import { MessagesRepository } from './messages.repository.js';
import { MessagesService } from './messages.service.js';

@Module({
  imports: [MongooseModule.forFeature([{ name: Message.name, schema: MessageSchema }]), ConversationsModule, MediaLinksModule],
  controllers: [MessagesController, DeliveryReceiptsController],
  providers: [MessagesRepository, MessagesService, DeliveryReceiptsService],
  exports: [MessagesService, MessagesRepository],
})
export class MessagesModule {}
