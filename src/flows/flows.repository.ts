import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { Flow } from './flow.schema.js';

const INBOUND_TRIGGERED = { 'trigger.type': 'inbound_message', isActive: true } as const;

@Injectable()
export class FlowsRepository extends TenantRepository<Flow> {
  constructor(@InjectModel(Flow.name) model: Model<Flow>) {
    super(model);
  }

  /** Active flows triggered by inbound messages, oldest first: the order they run in. */
  async findInboundTriggered(companyId: CompanyId, limit: number): Promise<Stored<Flow>[]> {
    return this.findPlain(companyId, INBOUND_TRIGGERED, { sort: { _id: 1 }, limit });
  }

  /** The ids and versions (`updatedAt`) of those flows, in the same order: whether a copy of them is still current. */
  async inboundTriggeredVersions(companyId: CompanyId, limit: number): Promise<Pick<Stored<Flow>, '_id' | 'updatedAt'>[]> {
    return this.findPlain(companyId, INBOUND_TRIGGERED, { sort: { _id: 1 }, limit, projection: { updatedAt: 1 } });
  }
}
