import { Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AssignmentModule } from '../assignment/assignment.module.js';
import { PasswordHasher } from '../auth/password-hasher.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { AgentsController } from './agents.controller.js';
import { AgentsModule } from './agents.module.js';
import { AgentsService } from './agents.service.js';

/**
 * The /v1/agents routes. Kept apart from AgentsModule (the schema and repository), which auth and
 * conversations import: deactivation re-queues conversations, so this module needs ConversationsModule,
 * and one module holding both would make an import cycle.
 */
@Module({
  imports: [AgentsModule, ApiKeysModule, ConversationsModule, AssignmentModule, TeamsModule],
  controllers: [AgentsController],
  providers: [AgentsService, PasswordHasher],
})
export class AgentsApiModule {}
