import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { Flow } from './flow.schema.js';

@Injectable()
export class FlowsRepository extends TenantRepository<Flow> {
  constructor(@InjectModel(Flow.name) model: Model<Flow>) {
    super(model);
  }

  /** Active flows triggered by inbound messages, oldest first: the order they run in. */
  async findInboundTriggered(companyId: CompanyId, limit: number): Promise<Stored<Flow>[]> {
    return this.findPlain(companyId, { 'trigger.type': 'inbound_message', isActive: true }, { sort: { _id: 1 }, limit });
  }
}
