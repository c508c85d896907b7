import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { TenantRepository } from '../database/tenancy/tenant-repository.js';
import { READ_MARKER_VIEW_FIELDS, ReadMarker } from './read-marker.schema.js';

/** Where a marker would move: a message of the conversation, its place, and the inbound count as of it. */
export type ReadPosition = Pick<ReadMarker, 'messageId' | 'messageAt' | 'readCount'>;

@Injectable()
export class ReadMarkersRepository extends TenantRepository<ReadMarker> {
  constructor(@InjectModel(ReadMarker.name) model: Model<ReadMarker>) {
    super(model);
  }

  /** The agent's markers on these conversations (those it never read have none), by conversation id. */
  async forConversations(companyId: CompanyId, agentId: Types.ObjectId, conversationIds: Types.ObjectId[]): Promise<Map<string, Stored<ReadMarker>>> {
    if (conversationIds.length === 0) return new Map();
    const rows = await this.findPlain(
      companyId,
      { agentId, conversationId: { $in: conversationIds } },
      { projection: READ_MARKER_VIEW_FIELDS, limit: conversationIds.length },
    );
    return new Map(rows.map((row) => [row.conversationId.toHexString(), row]));
  }

  async markerOf(companyId: CompanyId, agentId: Types.ObjectId, conversationId: Types.ObjectId): Promise<Stored<ReadMarker> | null> {
    return this.findOnePlain(companyId, { agentId, conversationId });
  }

  /**
   * Moves the agent's marker to `to` if that is ahead of where it stands (or it has none), in one write: the upsert's
   * filter names the markers `to` is ahead of, so behind an existing marker the insert it tries is refused by the
   * unique index (a duplicate key: false), and of two concurrent moves only the one ahead stays.
   */
  async moveForward(companyId: CompanyId, agentId: Types.ObjectId, conversationId: Types.ObjectId, to: ReadPosition, readAt: Date): Promise<boolean> {
    return this.claimOne(
      companyId,
      {
        agentId,
        conversationId,
        $or: [{ messageAt: { $lt: to.messageAt } }, { messageAt: to.messageAt, messageId: { $lt: to.messageId } }],
      },
      { $set: { messageId: to.messageId, messageAt: to.messageAt, readAt }, $max: { readCount: to.readCount } },
    );
  }
}
