import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter, Types } from 'mongoose';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { EventRelay } from '../events/event-relay.js';
import { EventSourceRepository } from '../events/event-source.repository.js';
import type { PendingEvent } from '../events/pending-event.schema.js';
import type { MessagePosition, PageDirection } from './message-cursor.js';
import { Message, type MessageDelivery, type MessageDirection } from './message.schema.js';
import { MESSAGE_VIEW_FIELDS } from './message.view.js';

/**
 * The query for an inbound message by the channel's own id. The `$type` repeats the unique partial index's filter:
 * MongoDB uses a partial index only for a query that implies its filter, and an equality on a string does not imply
 * `$type: 'string'` (without it, the lookup scans the company's messages).
 */
export function externalIdFilter(channel: string, externalId: string): QueryFilter<Message> {
  return { channel, externalId: { $eq: externalId, $type: 'string' } };
}

/** The query for messages by their file: the `$type` repeats the partial unique index's filter (see externalIdFilter). */
function mediaFilter(ids: Types.ObjectId[]): QueryFilter<Message> {
  return { 'media.id': { $in: ids, $type: 'objectId' } } as QueryFilter<Message>;
}

export interface MessageWindow {
  direction: PageDirection;
  /** Exclusive start: a time (from `before`/`after`) or a position (from a cursor, ties broken by `_id`). */
  from: Date | MessagePosition | null;
  /** Exclusive upper bound of a `newer` window (the `before` of an after/before window). */
  until: Date | null;
  limit: number;
  /** false: without private notes; true: private notes only; undefined: every message. */
  private?: boolean;
}

@Injectable()
export class MessagesRepository extends EventSourceRepository<Message> {
  constructor(@InjectModel(Message.name) model: Model<Message>, relay: EventRelay) {
    super(model, relay);
  }

  /**
   * Up to `limit` messages of a conversation beyond `from` in `direction`, in that direction's
   * order (`older`: newest first). Keyset on (createdAt, _id), served by the
   * { companyId, conversationId, createdAt, _id } index in either direction (`private: false` skips the notes along
   * it; `null` matches a message stored before notes), notes alone by the partial `notes_of_a_conversation` one.
   */
  async window(companyId: CompanyId, conversationId: Types.ObjectId, window: MessageWindow): Promise<Stored<Message>[]> {
    const older = window.direction === 'older';
    const beyond = older ? '$lt' : '$gt';
    const filter: QueryFilter<Message> = { conversationId };
    if (window.from instanceof Date) {
      filter.createdAt = { [beyond]: window.from };
    } else if (window.from) {
      filter.$or = [
        { createdAt: { [beyond]: window.from.createdAt } },
        { createdAt: window.from.createdAt, _id: { [beyond]: window.from.id } },
      ];
    }
    if (window.until) filter.createdAt = { ...filter.createdAt, $lt: window.until };
    if (window.private !== undefined) filter.private = window.private ? true : { $in: [false, null] };
    const order = older ? -1 : 1;
    // Read only for the page's view: through the driver (the filter holds ObjectIds and Dates), with the view's fields.
    return this.findPlain(companyId, filter, { sort: { createdAt: order, _id: order }, limit: window.limit, projection: MESSAGE_VIEW_FIELDS });
  }

  /**
   * Inserts a complete message (its id, time and every field chosen by the caller, as its event shows them) with
   * its event, as it is (the hot write of every message).
   */
  async insert(companyId: CompanyId, record: Stored<Message>, events: PendingEvent[]): Promise<Stored<Message>> {
    return this.insertCompleteWithEvents(companyId, record, events);
  }

  /** The inbound message a connector identified by the channel's own id. */
  async findByExternalId(companyId: CompanyId, channel: string, externalId: string): Promise<Stored<Message> | null> {
    return this.findOne(companyId, externalIdFilter(channel, externalId));
  }

  /**
   * Replaces an outbound message's delivery with `delivery` and the event `stage` makes of the result, only if its
   * status is still the one `current` shows (null matches a message stored before delivery receipts), so of
   * concurrent reports exactly one applies each move. Null when the status moved meanwhile (nothing written).
   */
  async moveDelivery(
    companyId: CompanyId,
    current: Stored<Message>,
    delivery: MessageDelivery,
    stage: (after: Stored<Message>) => PendingEvent[],
  ): Promise<Stored<Message> | null> {
    const updatedAt = new Date();
    const after = { ...current, delivery, updatedAt, pendingEvents: undefined } as Stored<Message>;
    const filter = { _id: current._id, direction: 'outbound', 'delivery.status': current.delivery?.status ?? null } as QueryFilter<Message>;
    return this.updateWithEvents(companyId, filter, { $set: { delivery, updatedAt } }, stage(after), { timestamps: false });
  }

  /** The newest message of a conversation to the contact or from it (private notes aside). */
  async newestOf(companyId: CompanyId, conversationId: Types.ObjectId): Promise<Stored<Message> | null> {
    const [newest] = await this.findPlain(
      companyId,
      { conversationId, direction: { $in: ['inbound', 'outbound'] } },
      { sort: { createdAt: -1, _id: -1 }, limit: 1, projection: { direction: 1, senderType: 1, type: 1, text: 1, caption: 1, createdAt: 1 } },
    );
    return newest ?? null;
  }

  /** A message of the conversation (its place and inbound count), or null when it is not one of its messages. */
  async findInConversation(companyId: CompanyId, conversationId: Types.ObjectId, id: Types.ObjectId): Promise<Stored<Message> | null> {
    return this.findOnePlain(companyId, { _id: id, conversationId }, { conversationId: 1, createdAt: 1, inboundCount: 1 });
  }

  /** Inbound messages of the conversation up to `message` (itself included), in the messages' order. */
  async countInboundUpTo(companyId: CompanyId, message: Stored<Message>): Promise<number> {
    return this.countPlain(companyId, {
      conversationId: message.conversationId,
      createdAt: { $lte: message.createdAt },
      $or: [{ createdAt: { $lt: message.createdAt } }, { _id: { $lte: message._id } }],
      direction: 'inbound',
    });
  }

  /**
   * Up to `limit` messages matching `filter` (its `$text` condition and the rest, on stored types), newest first; the
   * `$text` condition is served by the `message_search` text index, led by the company.
   */
  async search(companyId: CompanyId, filter: QueryFilter<Message>, limit: number): Promise<Stored<Message>[]> {
    return this.findPlain(companyId, filter, { sort: { createdAt: -1, _id: -1 }, limit, projection: MESSAGE_VIEW_FIELDS });
  }

  /** The message that refers to this file (its channel only), or null when none does. */
  async byMedia(companyId: CompanyId, id: Types.ObjectId): Promise<Pick<Stored<Message>, '_id' | 'channel'> | null> {
    return this.findOnePlain(companyId, mediaFilter([id]), { channel: 1 });
  }

  async existsWithDedupeKey(companyId: CompanyId, dedupeKey: string): Promise<boolean> {
    return (await this.findOne(companyId, { dedupeKey }, { _id: 1 })) !== null;
  }

  /**
   * Whether an agent sent a message to the contact in the conversation at or after `from` (and not after `until`):
   * what answers an SLA's next response. Bot messages and notes are no answer. On {companyId, conversationId, createdAt}.
   */
  async agentAnsweredBetween(companyId: CompanyId, conversationId: Types.ObjectId, from: Date, until: Date | null): Promise<boolean> {
    const createdAt = until ? { $gte: from, $lte: until } : { $gte: from };
    const found = await this.findOnePlain(companyId, { conversationId, createdAt, direction: 'outbound', senderType: 'agent' }, { _id: 1 });
    return found !== null;
  }

  /** Whether the conversation has a message to or from the contact before this one (notes aside). */
  async hasEarlierMessage(companyId: CompanyId, conversationId: Types.ObjectId, message: { id: Types.ObjectId; createdAt: Date }): Promise<boolean> {
    const earlier: QueryFilter<Message> = {
      conversationId,
      direction: { $in: ['inbound', 'outbound'] as MessageDirection[] },
      $or: [{ createdAt: { $lt: message.createdAt } }, { createdAt: message.createdAt, _id: { $lt: message.id } }],
    };
    return (await this.findOnePlain(companyId, earlier, { _id: 1 })) !== null;
  }
}
