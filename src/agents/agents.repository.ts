import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import type { StagedAuditEntry } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { Agent } from './agent.schema.js';

type AssignableAgent = Pick<Stored<Agent>, '_id' | 'lastAssignedAt'>;

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

  /** True when this call deactivated the agent, false when it was already inactive (or missing). Ends its tokens. */
  async deactivate(companyId: CompanyId, agentId: Types.ObjectId, audit?: StagedAuditEntry): Promise<boolean> {
    const update = { $set: { isActive: false, status: 'offline' }, $inc: { tokenVersion: 1 } };
    const result = await this.model
      .updateOne(this.scope(companyId, { _id: agentId, isActive: true }), audit ? withAudit(update, audit) : update)
      .exec();
    return result.modifiedCount === 1;
  }

  /** The same password at a higher cost (login upgrades old hashes): not a change the API shows, updatedAt stays. */
  async replacePasswordHash(companyId: CompanyId, agentId: Types.ObjectId, passwordHash: string): Promise<void> {
    await this.model.updateOne(this.scope(companyId, { _id: agentId }), { $set: { passwordHash } }, { timestamps: false }).exec();
  }

  async countActiveAdmins(companyId: CompanyId): Promise<number> {
    return this.count(companyId, { role: 'admin', isActive: true });
  }

  /** Who may receive conversations automatically: active and online. */
  async findAssignable(companyId: CompanyId): Promise<AssignableAgent[]> {
    return this.find(companyId, { isActive: true, status: 'online' }, { projection: { _id: 1, lastAssignedAt: 1 } });
  }

  /** Bookkeeping of the chooser, not a change of the agent as the API shows it: updatedAt stays. */
  async markAssigned(companyId: CompanyId, agentId: Types.ObjectId, at: Date): Promise<void> {
    await this.model
      .updateOne(this.scope(companyId, { _id: agentId }), { $set: { lastAssignedAt: at } }, { timestamps: false })
      .exec();
  }
}
