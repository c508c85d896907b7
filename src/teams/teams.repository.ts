import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
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

  /** The id of the team a body's `teamId` names (null stays null): 400 naming `teamId` unless a team of the company. */
  async referencedId(companyId: CompanyId, teamId: string | null): Promise<Types.ObjectId | null> {
    if (teamId === null) return null;
    const team = await this.findById(companyId, teamId, { _id: 1 });
    if (!team) throw new RequestValidationException([{ field: 'teamId', message: 'teamId must be a team of your company' }]);
    return team._id;
  }

  async idsOfMember(companyId: CompanyId, agentId: Types.ObjectId): Promise<string[]> {
    const rows = await this.findPlain(companyId, { memberIds: agentId }, { projection: { _id: 1 }, limit: MAX_TEAMS_PER_COMPANY });
    return rows.map((row) => row._id.toHexString());
  }
}
