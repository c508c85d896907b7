import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { ChannelsModule } from '../channels/channels.module.js';
import { ExternalMessageTemplatesController } from './external-message-templates.controller.js';
import { MessageTemplate, MessageTemplateSchema } from './message-template.schema.js';
import { MessageTemplatesController } from './message-templates.controller.js';
import { MessageTemplatesRepository } from './message-templates.repository.js';
import { MessageTemplatesService } from './message-templates.service.js';

/** Message templates of both interfaces; messages send them through MessageTemplatesService.prepare. */
@Module({
  imports: [MongooseModule.forFeature([{ name: MessageTemplate.name, schema: MessageTemplateSchema }]), ChannelsModule],
  controllers: [MessageTemplatesController, ExternalMessageTemplatesController],
  providers: [MessageTemplatesRepository, MessageTemplatesService],
  exports: [MessageTemplatesService],
})
export class MessageTemplatesModule {}
