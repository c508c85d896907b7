import { Injectable } from '@nestjs/common';
import type { QueryFilter } from 'mongoose';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { parseTimestamp } from '../messages/timestamp.js';
import { decodeConversationCursor, EARLIEST_DATE, encodeConversationCursor, type ConversationSort } from './conversation-order.js';
import { CONVERSATION_STATUSES, type Conversation, type ConversationStatus } from './conversation.schema.js';
import type { ConversationCountsView } from './conversation-counts.view.js';
import { LISTED_CONVERSATION_FIELDS } from './conversation.view.js';
import { ConversationsRepository } from './conversations.repository.js';
import type { ListConversationsQueryDto } from './dto/list-conversations-query.dto.js';

const OPEN_STATUSES = CONVERSATION_STATUSES.filter((status) => status !== 'closed');

/** A page of conversations as stored (LISTED_CONVERSATION_FIELDS), with the cursor of the next. */
export interface StoredPage {
  data: Stored<Conversation>[];
  nextCursor: string | null;
}

/** The inbox's reads of conversations (contract section 14): the filtered, ordered list and its counts. */
@Injectable()
export class ConversationLists {
  constructor(private readonly conversations: ConversationsRepository) {}

  /**
   * One page of the list (contract section 14), as stored: the filters combine, the page follows `sort` and
   * continues after `startAfter`. A contact of another company, like any of its ids, matches nothing.
   */
  async page(companyId: CompanyId, query: ListConversationsQueryDto): Promise<StoredPage> {
    const after = query.startAfter === undefined ? null : decodeConversationCursor(query.startAfter, query.sort);
    const page = await this.conversations.walk(companyId, listFilter(query), query.sort, after, query.limit, LISTED_CONVERSATION_FIELDS);
    return { data: page.data, nextCursor: page.next ? encodeConversationCursor(page.next) : null };
  }

  /**
   * One page of conversations matching `filter` (a query of stored types, e.g. a parsed filter's), in `sort` order after
   * `cursor` (a nextCursor of the same sort): search and saved views (contract section 20).
   */
  async filteredPage(
    companyId: CompanyId,
    filter: QueryFilter<Conversation>,
    sort: ConversationSort,
    cursor: string | undefined,
    limit: number,
  ): Promise<StoredPage> {
    const after = cursor === undefined ? null : decodeConversationCursor(cursor, sort);
    const page = await this.conversations.walk(companyId, filter, sort, after, limit, LISTED_CONVERSATION_FIELDS);
    return { data: page.data, nextCursor: page.next ? encodeConversationCursor(page.next) : null };
  }

  /** How many conversations match `filter`, counting no further than `cap` (saved views' counts). */
  async countUpTo(companyId: CompanyId, filter: QueryFilter<Conversation>, cap: number): Promise<number> {
    return this.conversations.countPlain(companyId, filter, cap);
  }

  /**
   * The inbox's counts over open conversations, for the calling agent (contract section 14): one `count` each on an
   * index range, which holds exactly the conversations counted (counted from the index alone) but for the snoozed
   * ones, a time range (their index range is read). Snoozed conversations are open ones: closing one wakes it.
   */
  async counts(companyId: CompanyId, agentId: string): Promise<ConversationCountsView> {
    const me = toObjectId(agentId);
    const count = (filter: QueryFilter<Conversation>) => this.conversations.countPlain(companyId, filter);
    const [bot, queued, human, unassigned, snoozed, mine, mineUnread] = await Promise.all([
      count({ status: 'bot' }),
      count({ status: 'queued' }),
      count({ status: 'human' }),
      count({ assignedAgentId: null, status: { $in: OPEN_STATUSES } }),
      count({ snoozedUntil: { $gte: EARLIEST_DATE } }),
      count({ assignedAgentId: me, status: 'human' }),
      count({ assignedAgentId: me, status: 'human', assigneeUnread: true }),
    ]);
    return { bot, queued, human, unassigned, snoozed, mine, mineUnread };
  }
}

/** The list's filters as a query on stored types (ObjectIds, Dates): 400 naming the field for contradictory ones. */
function listFilter(query: ListConversationsQueryDto): QueryFilter<Conversation> {
  const filter: QueryFilter<Conversation> = {};
  const statuses = query.status as ConversationStatus[] | undefined;
  if (statuses) filter.status = statuses.length === 1 ? statuses[0] : { $in: statuses };
  if (query.priority) filter.priority = query.priority;
  if (query.unassigned !== undefined && query.assignedAgentId) {
    throw new RequestValidationException([{ field: 'unassigned', message: 'unassigned cannot be combined with assignedAgentId' }]);
  }
  if (query.assignedAgentId) filter.assignedAgentId = toObjectId(query.assignedAgentId);
  if (query.unassigned !== undefined) filter.assignedAgentId = query.unassigned ? null : { $ne: null };
  if (query.contactId) filter.contactId = toObjectId(query.contactId);
  if (query.channel) filter.channel = query.channel;
  if (query.tags?.length) filter.tags = { $all: query.tags };
  const after = query.createdAfter === undefined ? null : parseTimestamp(query.createdAfter);
  const before = query.createdBefore === undefined ? null : parseTimestamp(query.createdBefore);
  if (after && before && before.getTime() <= after.getTime()) {
    throw new RequestValidationException([{ field: 'createdBefore', message: 'createdBefore must be later than createdAfter' }]);
  }
  if (after || before) filter.createdAt = { ...(after ? { $gte: after } : {}), ...(before ? { $lt: before } : {}) };
  if (query.snoozed !== undefined) filter.snoozedUntil = query.snoozed ? { $gte: EARLIEST_DATE } : null;
  return filter;
}
