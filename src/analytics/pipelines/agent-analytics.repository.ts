import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { Agent, type AgentStatus } from '../../agents/agent.schema.js';
import { TenantRepository, type CompanyId } from '../../database/tenancy/tenant-repository.js';

/** Agents a report lists: far above any company's team. */
const MAX_AGENTS_LISTED = 10_000;

/** The company's agents for the figures: active ones by status (on {companyId, isActive, status}), and names. */
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

  /** Every agent of the company, deactivated ones too, with its name; on {companyId, _id}. */
  async names(companyId: CompanyId): Promise<{ _id: Types.ObjectId; name: string; isActive: boolean }[]> {
    return this.findPlain(companyId, {}, { projection: { name: 1, isActive: 1 }, sort: { _id: 1 }, limit: MAX_AGENTS_LISTED });
  }
}
