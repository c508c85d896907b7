import { Module } from '@nestjs/common';
import { AgentsModule } from '../agents/agents.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { TeamsController } from './teams.controller.js';
import { TeamsModule } from './teams.module.js';
import { TeamsService } from './teams.service.js';

/** The /v1/teams routes. */
@Module({
  imports: [TeamsModule, AgentsModule, ConversationsModule],
  controllers: [TeamsController],
  providers: [TeamsService],
  exports: [TeamsService],
})
export class TeamsApiModule {}
