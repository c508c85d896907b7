import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { Types } from 'mongoose';
import type { Page } from '../common/pagination/page.js';
import type { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { PRIORITIES, type Priority } from '../conversations/conversation.schema.js';
import { CONVERSATION_VIEW_FIELDS, ConversationView, type QueueStandingView } from '../conversations/conversation.view.js';
import { ConversationQueueRepository, type QueuePosition } from '../conversations/conversation-queue.repository.js';
import { QueueStanding } from '../conversations/queue-standing.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { TeamsRepository } from '../teams/teams.repository.js';

/** One waiting conversation in a queue page. */
export class QueueEntryView {
  conversation: ConversationView;
  /** From 1, in routing order */
  position: number;
  waitingSeconds: number;
}

const CURSOR_VERSION = 'q1.';

/**
 * The queues as agents and connectors see them (contract section 19), in routing order. A page's cursor carries the
 * place of its last row and that row's position, so a page costs its own rows whatever the queue's length.
 */
@Injectable()
export class QueueViews {
  constructor(
    private readonly conversations: ConversationQueueRepository,
    private readonly teams: TeamsRepository,
    private readonly standing: QueueStanding,
  ) {}

  /** A team's queue; 404 for a missing, malformed or other company's team. */
  async teamQueue(companyId: CompanyId, teamId: string, query: PageQueryDto): Promise<Page<QueueEntryView>> {
    const team = await this.teams.findById(companyId, teamId, { _id: 1 });
    if (!team) throw new NotFoundException(`Team ${teamId} not found`);
    return this.page(companyId, team._id, query);
  }

  /** The company queue (`teamId` null). */
  async companyQueue(companyId: CompanyId, query: PageQueryDto): Promise<Page<QueueEntryView>> {
    return this.page(companyId, null, query);
  }

  /** Where a conversation stands; 404 for one missing, of another company, or not waiting in a queue. */
  async standingOf(companyId: CompanyId, id: string): Promise<QueueStandingView> {
    const conversation = await this.conversations.findById(companyId, id, { status: 1, teamId: 1, priority: 1, queuedAt: 1, snoozedUntil: 1 });
    const standing = conversation ? await this.standing.of(companyId, conversation) : null;
    if (!standing) throw new NotFoundException(`Conversation ${id} not found in any queue: it is not waiting`);
    return standing;
  }

  private async page(companyId: CompanyId, teamId: Types.ObjectId | null, query: PageQueryDto): Promise<Page<QueueEntryView>> {
    const after = query.cursor ? decodeQueueCursor(query.cursor) : null;
    const rows = await this.conversations.queuePage(companyId, teamId, after?.place ?? null, query.limit + 1, CONVERSATION_VIEW_FIELDS);
    const data = rows.slice(0, query.limit).map((row, index) => ({
      conversation: ConversationView.from(row),
      position: (after?.position ?? 0) + index + 1,
      waitingSeconds: this.standing.waitingSeconds(row.queuedAt!),
    }));
    const last = rows.length > query.limit ? rows[query.limit - 1] : null;
    const nextCursor = last
      ? encodeQueueCursor({ priority: last.priority, queuedAt: last.queuedAt!, id: last._id }, (after?.position ?? 0) + query.limit)
      : null;
    return { data, nextCursor };
  }
}

function encodeQueueCursor(place: QueuePosition, position: number): string {
  return Buffer.from(`${CURSOR_VERSION}${place.priority}.${place.queuedAt.getTime()}.${place.id.toHexString()}.${position}`).toString('base64url');
}

function decodeQueueCursor(cursor: string): { place: QueuePosition; position: number } {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  const [priority, time, id, position] = decoded.startsWith(CURSOR_VERSION) ? decoded.slice(CURSOR_VERSION.length).split('.') : [];
  const valid =
    PRIORITIES.includes(priority as Priority) && /^\d{1,15}$/.test(time ?? '') && /^[0-9a-f]{24}$/.test(id ?? '') && /^\d{1,9}$/.test(position ?? '');
  if (!valid) throw new BadRequestException('Invalid pagination cursor');
  return { place: { priority: priority as Priority, queuedAt: new Date(Number(time)), id: new Types.ObjectId(id) }, position: Number(position) };
}
