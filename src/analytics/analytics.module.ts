import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { Agent, AgentSchema } from '../agents/agent.schema.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { FlowExecution, FlowExecutionSchema } from '../flows/flow-execution.schema.js';
import { Message, MessageSchema } from '../messages/message.schema.js';
import { SettingsModule } from '../settings/settings.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { TeamsReport, TeamsReportController } from './teams-report.js';
import { AnalyticsController } from './analytics.controller.js';
import { AnalyticsService } from './analytics.service.js';
import { AgentAnalyticsRepository } from './pipelines/agent-analytics.repository.js';
import { ConversationAnalytics } from './pipelines/conversation-analytics.js';
import { FlowExecutionAnalyticsRepository } from './pipelines/flow-execution-analytics.repository.js';
import { MessageAnalyticsRepository } from './pipelines/message-analytics.repository.js';

/**
 * Read-only: the collections of other modules, through repositories that only aggregate; conversations through
 * the conversations module's own repository (the one way to that collection).
 */
@Module({
  imports: [
    ConversationsModule,
    MongooseModule.forFeature([
      { name: Message.name, schema: MessageSchema },
      { name: FlowExecution.name, schema: FlowExecutionSchema },
      { name: Agent.name, schema: AgentSchema },
    ]),
    SettingsModule,
    TeamsModule,
  ],
  controllers: [AnalyticsController, TeamsReportController],
  providers: [
    AnalyticsService,
    ConversationAnalytics,
    MessageAnalyticsRepository,
    FlowExecutionAnalyticsRepository,
    AgentAnalyticsRepository,
    TeamsReport,
  ],
})
export class AnalyticsModule {}
