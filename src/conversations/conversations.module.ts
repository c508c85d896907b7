import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AgentsModule } from '../agents/agents.module.js';
import { AttributesModule } from '../attributes/attributes.module.js';
import { ConversationAttributes } from './conversation-attributes.js';
import { ContactsModule } from '../contacts/contacts.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { QueueStanding } from './queue-standing.js';
import { ContactSummarySync } from './contact-summary-sync.js';
import { Conversation, ConversationSchema } from './conversation.schema.js';
import { ConversationLists } from './conversation-lists.js';
import { ConversationMessages } from './conversation-messages.js';
import { ConversationOpenings } from './conversation-openings.js';
import { ConversationQueueRepository } from './conversation-queue.repository.js';
import { ConversationsRepository } from './conversations.repository.js';
import { ConversationsService } from './conversations.service.js';
import { ReadMarker, ReadMarkerSchema } from './read-marker.schema.js';
import { ReadMarkersRepository } from './read-markers.repository.js';
import { ConversationSnoozes } from './snooze/conversation-snoozes.js';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: Conversation.name, schema: ConversationSchema },
      { name: ReadMarker.name, schema: ReadMarkerSchema },
    ]),
    AgentsModule,
    ContactsModule,
    AttributesModule,
    TeamsModule,
  ],
  providers: [ConversationsRepository, ConversationsService, ConversationOpenings, ConversationLists, ConversationMessages, ConversationSnoozes, ContactSummarySync, ConversationAttributes, ReadMarkersRepository, QueueStanding, ConversationQueueRepository],
  exports: [QueueStanding, ConversationsService, ConversationOpenings, ConversationLists, ConversationMessages, ConversationsRepository, ConversationQueueRepository, ConversationSnoozes, ReadMarkersRepository],
})
export class ConversationsModule {}
