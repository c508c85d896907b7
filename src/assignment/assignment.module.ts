import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AgentsModule } from '../agents/agents.module.js';
import { Conversation, ConversationSchema } from '../conversations/conversation.schema.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { AssignmentLeaseRepository } from './assignment-lease.repository.js';
import { AssignmentLease, AssignmentLeaseSchema } from './assignment-lease.schema.js';
import { AutoAssigner } from './auto-assigner.js';
import { AutoAssignmentListener } from './auto-assignment.listener.js';
import { WorkloadRepository } from './workload.repository.js';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: AssignmentLease.name, schema: AssignmentLeaseSchema },
      { name: Conversation.name, schema: ConversationSchema },
    ]),
    AgentsModule,
    ConversationsModule,
    SettingsModule,
  ],
  providers: [AssignmentLeaseRepository, WorkloadRepository, AutoAssigner, AutoAssignmentListener],
  exports: [AutoAssigner],
})
export class AssignmentModule {}
