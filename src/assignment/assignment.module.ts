import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AgentsModule } from '../agents/agents.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { AssignmentLeaseRepository } from './assignment-lease.repository.js';
import { AssignmentLease, AssignmentLeaseSchema } from './assignment-lease.schema.js';
import { AutoAssigner } from './auto-assigner.js';
import { AutoAssignmentConsumer } from './auto-assignment.consumer.js';

@Module({
  imports: [
    MongooseModule.forFeature([
      { name: AssignmentLease.name, schema: AssignmentLeaseSchema },
    ]),
    AgentsModule,
    ConversationsModule,
    SettingsModule,
  ],
  providers: [AssignmentLeaseRepository, AutoAssigner, AutoAssignmentConsumer],
  exports: [AutoAssigner, AutoAssignmentConsumer],
})
export class AssignmentModule {}
