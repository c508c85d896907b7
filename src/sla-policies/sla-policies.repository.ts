import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { MAX_SLA_POLICIES_PER_COMPANY, SlaPolicy } from './sla-policy.schema.js';

@Injectable()
export class SlaPoliciesRepository extends TenantRepository<SlaPolicy> {
  constructor(@InjectModel(SlaPolicy.name) model: Model<SlaPolicy>) {
    super(model);
  }

  /** The active policies, oldest first: the order a conversation is matched in; on {companyId, isActive, _id}. */
  async active(companyId: CompanyId): Promise<Stored<SlaPolicy>[]> {
    return this.findPlain(companyId, { isActive: true }, { sort: { _id: 1 }, limit: MAX_SLA_POLICIES_PER_COMPANY });
  }
}
