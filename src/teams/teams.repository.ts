import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { MAX_TEAMS_PER_COMPANY, Team } from './team.schema.js';

@Injectable()
export class TeamsRepository extends TenantRepository<Team> {
  constructor(@InjectModel(Team.name) model: Model<Team>) {
    super(model);
  }

  /** Every team of the company (at most MAX_TEAMS_PER_COMPANY): routing reads them once per pass. */
  async all(companyId: CompanyId): Promise<Stored<Team>[]> {
    return this.findPlain(companyId, {}, { sort: { _id: 1 }, limit: MAX_TEAMS_PER_COMPANY });
  }

  async idsOfMember(companyId: CompanyId, agentId: Types.ObjectId): Promise<string[]> {
    const rows = await this.findPlain(companyId, { memberIds: agentId }, { projection: { _id: 1 }, limit: MAX_TEAMS_PER_COMPANY });
    return rows.map((row) => row._id.toHexString());
  }
}
