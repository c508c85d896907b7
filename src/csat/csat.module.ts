import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { CsatSurveysConsumer } from './csat-surveys.consumer.js';
import { CsatController } from './csat.controller.js';
import { CsatService } from './csat.service.js';

/** Customer satisfaction (contract section 16): the survey on close, and the connector's rating route. */
@Module({
  imports: [ConversationsModule, MessagesModule, SettingsModule],
  controllers: [CsatController],
  providers: [CsatService, CsatSurveysConsumer],
})
export class CsatModule {}
