import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { AgentLoadRepair } from './agent-load-repair.js';
import { AssignTeamStep } from './assign-team.step.js';
import { AutoAssigner } from './auto-assigner.js';
import { AutoAssignmentConsumer } from './auto-assignment.consumer.js';
import { ConversationTransfers } from './conversation-transfers.js';
import { QueueTimeouts } from './queue-timeouts.js';
import { QueueViews } from './queue-views.js';
import { ExternalQueueController, RoutingController } from './routing.controller.js';

/** Routing (contract section 19): the one mechanism serving the company's and the teams' queues, and what goes with it. */
@Module({
  imports: [AgentsModule, ConversationsModule, SettingsModule, TeamsModule, MessagesModule],
  controllers: [RoutingController, ExternalQueueController],
  providers: [AssignTeamStep, AutoAssigner, AutoAssignmentConsumer, AgentLoadRepair, QueueTimeouts, QueueViews, ConversationTransfers],
  exports: [AutoAssigner, AutoAssignmentConsumer, ConversationTransfers],
})
export class AssignmentModule {}
