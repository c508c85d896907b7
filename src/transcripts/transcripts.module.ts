import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { ContactsModule } from '../contacts/contacts.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { TranscriptsController } from './transcripts.controller.js';
import { TranscriptsService } from './transcripts.service.js';

/** GET /v1/conversations/:id/transcript. */
@Module({
  imports: [ConversationsModule, MessagesModule, ContactsModule, AgentsModule, SettingsModule],
  controllers: [TranscriptsController],
  providers: [TranscriptsService],
})
export class TranscriptsModule {}
