import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { Conversation } from '../conversations/conversation.schema.js';
import { TenantRepository, type CompanyId } from '../database/tenancy/tenant-repository.js';

/**
 * What auto-assignment reads of the conversations: the queue and each agent's open work. Read only;
 * every change of a conversation goes through ConversationsService.
 */
@Injectable()
export class WorkloadRepository extends TenantRepository<Conversation> {
  constructor(@InjectModel(Conversation.name) model: Model<Conversation>) {
    super(model);
  }

  /** Open `human` conversations per agent (agents with none are absent); served by companyId+assignedAgentId. */
  async openConversationsByAgent(companyId: CompanyId, agentIds: Types.ObjectId[]): Promise<Map<string, number>> {
    const rows = await this.aggregate<{ _id: Types.ObjectId; open: number }>(companyId, [
      { $match: { assignedAgentId: { $in: agentIds }, status: 'human' } },
      { $group: { _id: '$assignedAgentId', open: { $sum: 1 } } },
    ]);
    return new Map(rows.map((row) => [row._id.toHexString(), row.open]));
  }

  /** The ids of queued conversations, oldest first; served by companyId+status+_id. */
  async queued(companyId: CompanyId, limit: number): Promise<Types.ObjectId[]> {
    const rows = await this.find(companyId, { status: 'queued' }, { sort: { _id: 1 }, limit, projection: { _id: 1 } });
    return rows.map((row) => row._id);
  }
}
