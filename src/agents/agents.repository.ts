import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { TenantRepository, type Stored } from '../database/tenancy/tenant-repository.js';
import { Agent } from './agent.schema.js';

@Injectable()
export class AgentsRepository extends TenantRepository<Agent> {
  constructor(@InjectModel(Agent.name) model: Model<Agent>) {
    super(model);
  }

  /** Login is the one lookup made before the company is known: by e-mail, among agents that have a password. */
  async findLoginCandidate(email: string): Promise<Stored<Agent> | null> {
    return (await this.model
      .findOne({ email: email.trim().toLowerCase(), passwordHash: { $type: 'string' } })
      .select('+passwordHash')
      .setOptions({ [CROSS_TENANT]: true })
      .lean()
      .exec()) as Stored<Agent> | null;
  }

  async isLoginEmailTaken(email: string): Promise<boolean> {
    return (await this.findLoginCandidate(email)) !== null;
  }
}
