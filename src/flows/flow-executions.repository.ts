import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository } from '../database/tenancy/tenant-repository.js';
import { FlowExecution } from './flow-execution.schema.js';

@Injectable()
export class FlowExecutionsRepository extends TenantRepository<FlowExecution> {
  constructor(@InjectModel(FlowExecution.name) model: Model<FlowExecution>) {
    super(model);
  }
}
