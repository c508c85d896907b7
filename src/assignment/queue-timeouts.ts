import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Conversation } from '../conversations/conversation.schema.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { wakeFields } from '../conversations/snooze/snooze-changes.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { stageEvent, type PendingEvent } from '../events/pending-event.schema.js';
import { Clock } from '../lanes/clock.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import { MessagesService } from '../messages/messages.service.js';
import { TeamsRepository } from '../teams/teams.repository.js';

export const QUEUE_TIMEOUT = 'queue-timeout';
export const QUEUE_TIMEOUT_REASON = 'queue_timeout';

interface QueueEntry {
  teamId: string;
  /** The entry's `queuedAt` (ms): the same conversation entering again is another entry. */
  queuedAt: number;
}

/**
 * A team's maximum wait (contract section 19) on durable timers: when a conversation enters a team's queue with
 * `maxWaitSeconds`, a timer keyed by that entry (conversation, team, time) falls due then. Still waiting in that queue
 * when it fires, the team's overflow applies, with `conversation.queue_timeout` written in the same write as the
 * change (and the entry's key, so a second firing after a crash finds it done): `team` moves it to the other team's
 * queue keeping `queuedAt`, `message` has the bot send the text (once, keyed by the timer) and leaves it waiting,
 * `close` closes it with reason `queue_timeout`.
 */
@Injectable()
export class QueueTimeouts implements OnModuleInit {
  private readonly logger = new Logger(QueueTimeouts.name);

  constructor(
    private readonly timers: DurableTimers,
    private readonly teams: TeamsRepository,
    private readonly conversations: ConversationsService,
    private readonly messages: MessagesService,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.timers.register<QueueEntry>(QUEUE_TIMEOUT, (timer) => this.fire(timer));
  }

  /** A conversation (as an event showed it) entered or moved within the queues: times its wait in a team's queue. */
  async entered(companyId: CompanyId, conversation: ConversationView): Promise<void> {
    if (conversation.status !== 'queued' || !conversation.teamId || !conversation.queuedAt) return;
    const team = await this.teams.findById(companyId, conversation.teamId, { maxWaitSeconds: 1, overflow: 1 });
    if (!team?.maxWaitSeconds || !team.overflow) return;
    const queuedAt = Date.parse(conversation.queuedAt);
    // A move keeps `queuedAt`: the new queue's wait counts from the move at the earliest.
    const since = Math.max(queuedAt, Date.parse(conversation.updatedAt));
    const entry: QueueEntry = { teamId: conversation.teamId, queuedAt };
    await this.timers.setNoLaterThan(companyId, QUEUE_TIMEOUT, keyOf(conversation.id, entry), new Date(since + team.maxWaitSeconds * 1000), {
      ...entry,
    });
  }

  private async fire(timer: FiredTimer<QueueEntry>): Promise<void> {
    const { companyId, payload } = timer;
    const conversationId = timer.key.split('.')[0];
    const current = await this.conversations.findStored(companyId, conversationId);
    if (!this.stillWaiting(current, payload)) return;
    const overflow = (await this.teams.findById(companyId, payload.teamId))?.overflow;
    if (!overflow) return;
    // Sent before the event is written, keyed by the timer: a firing again after a crash sends nothing twice.
    if (overflow.action === 'message') {
      const refused = await this.messages.sendBotTextOnce(companyId, conversationId, overflow.text ?? '', timer.id);
      if (refused) this.logger.warn(`Queue timeout message not sent to conversation ${conversationId}: ${refused}`);
    }
    await this.conversations.change(companyId, current, (conversation) => {
      if (!this.stillWaiting(conversation, payload) || conversation.queueTimeout?.key === timer.key) return null;
      const set: Partial<Conversation> = { queueTimeout: { key: timer.key, at: timer.firedAt, teamId: toObjectId(payload.teamId) } };
      if (overflow.action === 'team' && overflow.teamId) set.teamId = overflow.teamId;
      const closes = overflow.action === 'close';
      if (closes) {
        const closedAt = this.clock.now();
        Object.assign(set, { status: 'closed', isOpen: false, closedAt, closeReason: QUEUE_TIMEOUT_REASON, ...wakeFields(conversation, closedAt) });
      }
      return {
        expected: { status: 'queued', teamId: conversation.teamId },
        set,
        events: (after: Stored<Conversation>): PendingEvent[] => {
          const view = ConversationView.from(after);
          const timedOut = stageEvent(
            'conversation.queue_timeout',
            { conversation: view, teamId: payload.teamId, action: overflow.action },
            { occurredAt: after.updatedAt },
          );
          if (!closes) return [timedOut];
          return [timedOut, stageEvent('conversation.closed', { conversation: view, reason: QUEUE_TIMEOUT_REASON }, { occurredAt: after.updatedAt })];
        },
      };
    });
  }

  /** Still in the queue entry the timer was set for. */
  private stillWaiting(conversation: Stored<Conversation>, entry: QueueEntry): boolean {
    return (
      conversation.status === 'queued' &&
      String(conversation.teamId) === String(toObjectId(entry.teamId)) &&
      conversation.queuedAt?.getTime() === entry.queuedAt
    );
  }
}

function keyOf(conversationId: string, entry: QueueEntry): string {
  return `${conversationId}.${entry.teamId}.${entry.queuedAt}`;
}
