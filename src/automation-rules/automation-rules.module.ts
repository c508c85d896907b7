import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AgentsModule } from '../agents/agents.module.js';
import { AssignmentModule } from '../assignment/assignment.module.js';
import { AttributesModule } from '../attributes/attributes.module.js';
import { CannedResponsesModule } from '../canned-responses/canned-responses.module.js';
import { ContactsModule } from '../contacts/contacts.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { FlowsModule } from '../flows/flows.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { SearchModule } from '../search/search.module.js';
import { TeamsModule } from '../teams/teams.module.js';
import { AutomationRuleCache } from './automation-rule-cache.js';
import { AutomationRule, AutomationRuleSchema } from './automation-rule.schema.js';
import { AutomationRulesConsumer } from './automation-rules.consumer.js';
import { AutomationRulesController } from './automation-rules.controller.js';
import { AutomationRulesRepository } from './automation-rules.repository.js';
import { AutomationRulesService } from './automation-rules.service.js';
import { AutomationRun, AutomationRunSchema } from './automation-run.schema.js';
import { AutomationRunsRepository } from './automation-runs.repository.js';
import { RuleChecks } from './rule-checks.js';
import { RuleRunner } from './rule-runner.js';
import { RuleTimers } from './rule-timers.js';

/** Automation rules (contract section 21): the routes, the event log's consumer, the time triggers and the runs. */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: AutomationRule.name, schema: AutomationRuleSchema },
      { name: AutomationRun.name, schema: AutomationRunSchema },
    ]),
    AgentsModule,
    AssignmentModule,
    AttributesModule,
    CannedResponsesModule,
    ContactsModule,
    ConversationsModule,
    FlowsModule,
    MessagesModule,
    SearchModule,
    TeamsModule,
  ],
  controllers: [AutomationRulesController],
  providers: [
    AutomationRulesRepository,
    AutomationRunsRepository,
    AutomationRuleCache,
    AutomationRulesService,
    AutomationRulesConsumer,
    RuleChecks,
    RuleRunner,
    RuleTimers,
  ],
})
export class AutomationRulesModule {}
