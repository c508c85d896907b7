import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { Agent, type AgentStatus } from '../../agents/agent.schema.js';
import { TenantRepository, type CompanyId } from '../../database/tenancy/tenant-repository.js';

/** Active agents by status, on the {companyId, isActive, status} index. */
@Injectable()
export class AgentAnalyticsRepository extends TenantRepository<Agent> {
  constructor(@InjectModel(Agent.name) model: Model<Agent>) {
    super(model);
  }

  async countActiveByStatus(companyId: CompanyId): Promise<{ _id: AgentStatus; count: number }[]> {
    return this.aggregate(companyId, [
      { $match: { isActive: true } },
      { $group: { _id: '$status', count: { $sum: 1 } } },
    ]);
  }
}
