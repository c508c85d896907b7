import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { SlaPoliciesController } from './sla-policies.controller.js';
import { SlaPoliciesRepository } from './sla-policies.repository.js';
import { SlaPoliciesService } from './sla-policies.service.js';
import { SlaPolicy, SlaPolicySchema } from './sla-policy.schema.js';

@Module({
  imports: [MongooseModule.forFeature([{ name: SlaPolicy.name, schema: SlaPolicySchema }])],
  controllers: [SlaPoliciesController],
  providers: [SlaPoliciesRepository, SlaPoliciesService],
  exports: [SlaPoliciesRepository],
})
export class SlaPoliciesModule {}
