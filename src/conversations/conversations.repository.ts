import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { Conversation } from './conversation.schema.js';

@Injectable()
export class ConversationsRepository extends TenantRepository<Conversation> {
  constructor(@InjectModel(Conversation.name) model: Model<Conversation>) {
    super(model);
  }

  /** The contact's open conversation on a channel; served by the partial unique index, which needs `isOpen: true`. */
  async findOpen(companyId: CompanyId, contactId: Types.ObjectId, channel: string): Promise<Stored<Conversation> | null> {
    return this.findOne(companyId, { contactId, channel, isOpen: true });
  }

  /**
   * Records a new message at `at` on an open conversation: `lastMessageAt` only moves forward, and
   * a response (outbound message) sets `firstResponseAt` once. Answers null when the conversation
   * is missing or closed, so a message can never land in a closed conversation.
   */
  async recordMessage(
    companyId: CompanyId,
    id: Types.ObjectId,
    at: Date,
    isResponse: boolean,
  ): Promise<Stored<Conversation> | null> {
    if (isResponse) {
      const first = await this.updateOne(
        companyId,
        { _id: id, isOpen: true, firstResponseAt: null },
        { $set: { firstResponseAt: at }, $max: { lastMessageAt: at } },
      );
      if (first) return first;
    }
    return this.updateOne(companyId, { _id: id, isOpen: true }, { $max: { lastMessageAt: at } });
  }
}
