import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { Agent, AgentSchema } from './agent.schema.js';
import { AgentsRepository } from './agents.repository.js';

@Module({
  imports: [MongooseModule.forFeature([{ name: Agent.name, schema: AgentSchema }])],
  providers: [AgentsRepository],
  exports: [AgentsRepository],
})
export class AgentsModule {}
