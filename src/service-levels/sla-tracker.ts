import { Injectable } from '@nestjs/common';
import type { Types } from 'mongoose';
import type { BusinessCalendar } from '../business-hours/business-calendar.js';
import { BusinessHoursService } from '../business-hours/business-hours.service.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { byConversation, eachConversation } from '../events/consumers/conversation-batches.js';
import type { AnyDomainEvent, DomainEventName } from '../events/domain-events.js';
import { stageEvent, type PendingEvent } from '../events/pending-event.schema.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import type { SlaMetric } from '../sla-policies/sla-metrics.js';
import { SlaPoliciesRepository } from '../sla-policies/sla-policies.repository.js';
import type { SlaPolicy } from '../sla-policies/sla-policy.schema.js';
import { firstMatching } from '../sla-policies/sla-policy-matching.js';
import { countedTimeOf } from './sla-clock-inputs.js';
import { clocksFor, factsOf, sameClocks, targetsOf, type ConversationSla, type SlaClock } from './sla-state.js';
import { SlaTimers } from './sla-timers.js';

/** The events that move SLA clocks. */
export const SLA_EVENTS = [
  'conversation.created',
  'conversation.priority_changed',
  'conversation.snoozed',
  'conversation.unsnoozed',
  'conversation.closed',
  'message.received',
  'message.sent',
] as const satisfies readonly DomainEventName[];
type SlaEvent = Extract<AnyDomainEvent, { type: (typeof SLA_EVENTS)[number] }>;

/** Writes of one conversation's SLA tried before the batch fails (and is retried by the consumer). */
const WRITE_ATTEMPTS = 5;

const NO_TARGETS = { firstResponseSeconds: null, nextResponseSeconds: null, resolutionSeconds: null, warnBeforeSeconds: null, businessHoursOnly: false };

/** What a batch of one company's events needs once: its active policies (read when first needed) and calendar. */
interface CompanyContext {
  policies(): Promise<Stored<SlaPolicy>[]>;
  calendar: BusinessCalendar;
}

/**
 * Keeps each conversation's SLA (sla-state.ts) in step with the event log, after the fact: as a consumer of the log
 * (durable, in order per company) it applies opening, messages, priority changes and the close to the clocks, in the
 * one write of the conversation's SLA per batch, and moves the deadline timers (SlaTimers). Each event is applied
 * once: the SLA records the sequence of the last one. The facts are taken as they stood at each event (an answer
 * recorded later had not happened yet), so a consumer running late decides as one on time would: a target met after
 * its deadline without a breach yet (the consumer was down when it fell due) is recorded as breached, with its
 * `sla.breached`, in that write.
 */
@Injectable()
export class SlaTracker {
  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly messages: MessagesRepository,
    private readonly policies: SlaPoliciesRepository,
    private readonly businessHours: BusinessHoursService,
    private readonly timers: SlaTimers,
  ) {}

  async apply(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    const slaEvents = events.filter((event): event is SlaEvent => (SLA_EVENTS as readonly string[]).includes(event.type));
    const grouped = byConversation(slaEvents, (event) => event.data.conversation.id);
    if (grouped.size === 0) return;
    // Only conversations with an SLA, or that may take one now (opened, priority changed, and the company has an
    // active policy), are read one by one.
    const withSla = await this.conversations.withSla(companyId, [...grouped.keys()].map(toObjectId));
    const matching = (event: SlaEvent) => event.type === 'conversation.created' || event.type === 'conversation.priority_changed';
    const mayMatch = [...grouped].some(([id, conversationEvents]) => !withSla.has(id) && conversationEvents.some(matching));
    const active = mayMatch ? await this.policies.active(companyId) : [];
    for (const [id, conversationEvents] of grouped) {
      if (!withSla.has(id) && (active.length === 0 || !conversationEvents.some(matching))) grouped.delete(id);
    }
    if (grouped.size === 0) return;
    let policies: Promise<Stored<SlaPolicy>[]> | undefined;
    const context: CompanyContext = {
      // A priority change of a conversation with an SLA may need them when none was read above.
      policies: () => (policies ??= mayMatch ? Promise.resolve(active) : this.policies.active(companyId)),
      calendar: await this.businessHours.calendar(companyId),
    };
    // Conversations are independent: their clocks are computed side by side, each one's events in log order.
    await eachConversation(grouped, (id, conversationEvents) => this.applyTo(companyId, toObjectId(id), conversationEvents, context));
  }

  /**
   * Computes the clocks again from the conversation as it stands (business hours changed, a sleep moved them) and
   * resets every timer from the result.
   */
  async recompute(companyId: CompanyId, id: Types.ObjectId): Promise<void> {
    const calendar = await this.businessHours.calendar(companyId);
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
      const conversation = await this.conversations.findById(companyId, id.toHexString());
      const before = conversation?.sla ?? null;
      if (!conversation || !before) return;
      const clocks = clocksFor(before.targets, factsOf(conversation.createdAt, before), before.waitingSince, before.clocks, countedTimeOf(conversation, before.targets, calendar));
      const after = { ...before, clocks };
      if (sameClocks(before, after)) return this.timers.settle(companyId, id, before, before, true);
      if (await this.write(companyId, conversation, after)) return this.timers.settle(companyId, id, before, { ...after, version: before.version + 1 }, true);
    }
    throw new Error(`The SLA of conversation ${id.toHexString()} kept changing while it was computed again`);
  }

  private async applyTo(companyId: string, id: Types.ObjectId, events: SlaEvent[], context: CompanyContext): Promise<void> {
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt += 1) {
      const conversation = await this.conversations.findById(companyId, id.toHexString());
      if (!conversation) return;
      const before = conversation.sla ?? null;
      let sla = before;
      let replayed = false;
      const late: MissedTarget[] = [];
      for (const event of events) {
        if (sla && event.sequence <= sla.sequence) {
          replayed = true;
          continue;
        }
        const next = await this.step(conversation, sla, event, context);
        if (sla && next) late.push(...missedOnEnd(sla, next, instantOf(event)));
        sla = next && { ...next, sequence: event.sequence };
      }
      if (sameClocks(before, sla)) {
        // A crash may have come between this write and its timers: set them all again.
        if (replayed) await this.timers.settle(companyId, id, before, before, true);
        return;
      }
      const after = sla && { ...sla, breaches: [...new Set([...sla.breaches, ...late.map((missed) => missed.metric)])] };
      if (await this.write(companyId, conversation, after, late)) {
        return this.timers.settle(companyId, id, before, after && { ...after, version: (before?.version ?? 0) + 1 });
      }
    }
    throw new Error(`The SLA of conversation ${id.toHexString()} kept changing while the event log was applied to it`);
  }

  /**
   * The SLA after one event (null: no policy). What the clocks follow (the answer, the close) is taken from the
   * events as they come, not from the record as it stands now, so that a consumer running late sees each event's
   * moment as it was.
   */
  private async step(conversation: Stored<Conversation>, sla: ConversationSla | null, event: SlaEvent, context: CompanyContext): Promise<ConversationSla | null> {
    let next = sla;
    const at = instantOf(event);
    switch (event.type) {
      case 'conversation.created':
        if (sla) return sla;
        next = await this.matched(null, event.data.conversation, { answeredAt: null, closedAt: null }, context);
        break;
      case 'conversation.priority_changed':
        // A first policy found late takes the answer and the close from the record (no earlier event told them).
        next = await this.matched(sla, event.data.conversation, { answeredAt: conversation.firstResponseAt, closedAt: conversation.closedAt }, context);
        break;
      case 'message.received':
        if (sla && !sla.closedAt && !sla.waitingSince && sla.answeredAt && sla.answeredAt <= at && (await this.unanswered(conversation, at))) {
          next = { ...sla, waitingSince: at };
        }
        break;
      case 'message.sent':
        if (sla && event.data.message.senderType === 'agent') {
          const waitingSince = sla.waitingSince && at >= sla.waitingSince ? null : sla.waitingSince;
          next = { ...sla, answeredAt: sla.answeredAt ?? at, waitingSince };
        }
        break;
      case 'conversation.closed':
        if (sla) next = { ...sla, closedAt: sla.closedAt ?? at };
        break;
      case 'conversation.snoozed':
      case 'conversation.unsnoozed':
        // The sleeps moved the deadlines: computed again below, from the conversation's sleeps as they are.
        break;
    }
    if (!next) return null;
    const counted = countedTimeOf(conversation, next.targets, context.calendar);
    return { ...next, clocks: clocksFor(next.targets, factsOf(conversation.createdAt, next), next.waitingSince, next.clocks, counted) };
  }

  /**
   * The first active policy matching the conversation's priority and channel. The same policy: unchanged. Another:
   * its targets, on the same clocks' starts (a target already missed stays missed). None: no SLA, or one without
   * targets that keeps the targets missed.
   */
  private async matched(
    sla: ConversationSla | null,
    conversation: ConversationView,
    seen: Pick<ConversationSla, 'answeredAt' | 'closedAt'>,
    context: CompanyContext,
  ): Promise<ConversationSla | null> {
    const policy = firstMatching(await context.policies(), conversation);
    if (policy && sla?.policyId?.equals(policy._id)) return sla;
    if (!policy && (!sla || sla.breaches.length === 0)) return null;
    if (!policy && sla?.policyId === null) return sla;
    const targets = policy ? targetsOf(policy) : NO_TARGETS;
    return {
      policyId: policy?._id ?? null,
      targets,
      businessHoursOnly: targets.businessHoursOnly,
      answeredAt: sla ? sla.answeredAt : seen.answeredAt,
      closedAt: sla ? sla.closedAt : seen.closedAt,
      waitingSince: sla?.waitingSince ?? null,
      clocks: sla?.clocks ?? {},
      breaches: sla?.breaches ?? [],
      sequence: sla?.sequence ?? 0,
      version: sla?.version ?? 0,
    };
  }

  /**
   * Whether no agent has answered since `at`: a reply logged before the contact's message, sent at about the same
   * moment, answers it, and must not leave it waiting.
   */
  private async unanswered(conversation: Stored<Conversation>, at: Date): Promise<boolean> {
    return !(await this.messages.agentAnsweredBetween(conversation.companyId, conversation._id, at, null));
  }

  /** Writes `sla` over the version the conversation was read with, with `sla.breached` for each target found missed late. */
  private async write(companyId: CompanyId, conversation: Stored<Conversation>, sla: ConversationSla | null, late: MissedTarget[] = []): Promise<boolean> {
    const stored = sla && { ...sla, version: (conversation.sla?.version ?? 0) + 1 };
    const events = (after: Stored<Conversation>): PendingEvent[] =>
      late.map(({ metric, dueAt, policyId }) =>
        stageEvent('sla.breached', { conversation: ConversationView.from(after), metric, dueAt: dueAt.toISOString(), policyId: String(policyId) }, { occurredAt: after.updatedAt }),
      );
    return (await this.conversations.changeSla(companyId, conversation, { sla: stored }, late.length > 0 ? events : undefined)) !== null;
  }
}

/** The moment an event tells of: the message's, the close's, or when it was logged. */
function instantOf(event: SlaEvent): Date {
  if (event.type === 'message.received' || event.type === 'message.sent') return new Date(event.data.message.createdAt);
  if (event.type === 'conversation.closed' && event.data.conversation.closedAt) return new Date(event.data.conversation.closedAt);
  if (event.type === 'conversation.created') return new Date(event.data.conversation.createdAt);
  return event.occurredAt;
}

/** A target found missed after the fact: its metric, its due time and the policy it was set by. */
interface MissedTarget {
  metric: SlaMetric;
  dueAt: Date;
  policyId: Types.ObjectId | null;
}

/**
 * The clocks of `before` that `after` ended (met, stopped by the close or by a policy without that target) at
 * `endedAt` past their due time without a breach: the deadline fell due while no firing could see it (the consumer
 * decides after the fact).
 */
function missedOnEnd(before: ConversationSla, after: ConversationSla, endedAt: Date): MissedTarget[] {
  const missed: MissedTarget[] = [];
  for (const [metric, clock] of Object.entries(before.clocks) as [SlaMetric, SlaClock][]) {
    const still = after.clocks[metric];
    const ended = !still || still.startedAt.getTime() !== clock.startedAt.getTime();
    if (ended && !clock.breached && clock.dueAt !== null && clock.dueAt.getTime() < endedAt.getTime()) {
      missed.push({ metric, dueAt: clock.dueAt, policyId: before.policyId });
    }
  }
  return missed;
}
