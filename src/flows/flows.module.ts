import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
import { AgentsModule } from '../agents/agents.module.js';
import { AssignmentModule } from '../assignment/assignment.module.js';
import { AutoRepliesModule } from '../auto-replies/auto-replies.module.js';
import { ConversationsModule } from '../conversations/conversations.module.js';
import { MessagesModule } from '../messages/messages.module.js';
import { FlowExecution, FlowExecutionSchema } from './flow-execution.schema.js';
import { FlowExecutionsRepository } from './flow-executions.repository.js';
import { FlowRunner } from './flow-runner.js';
import { Flow, FlowSchema } from './flow.schema.js';
import { FlowTriggerMatcher } from './flow-trigger-matcher.js';
import { InboundFlows } from './inbound-flows.js';
import { InboundFlowsConsumer } from './inbound-flows.consumer.js';
import { FlowsController } from './flows.controller.js';
import { FlowsRepository } from './flows.repository.js';
import { FlowsService } from './flows.service.js';
import { FlowStepHandlers } from './steps/flow-step-handlers.js';

@Module({
  imports: [
    DiscoveryModule,
    MongooseModule.forFeature([
      { name: Flow.name, schema: FlowSchema },
      { name: FlowExecution.name, schema: FlowExecutionSchema },
    ]),
    AgentsModule,
    AssignmentModule,
    AutoRepliesModule,
    ConversationsModule,
    MessagesModule,
  ],
  controllers: [FlowsController],
  providers: [FlowsRepository, FlowExecutionsRepository, FlowRunner, FlowStepHandlers, FlowTriggerMatcher, FlowsService, InboundFlows, InboundFlowsConsumer],
  // For automation rules: `run_flow` runs a flow as its route does.
  exports: [FlowsRepository, FlowRunner],
})
export class FlowsModule {}
