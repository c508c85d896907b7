import { Injectable, type OnModuleInit } from '@nestjs/common';
import { BusinessHoursService } from '../business-hours/business-hours.service.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import type { SlaMetric } from '../sla-policies/sla-metrics.js';
import { countedTimeOf } from './sla-clock-inputs.js';
import { clocksFor, factsOf, stageAt, type ConversationSla, type SlaClock, type SlaStage } from './sla-state.js';
import { SLA_TIMER, SlaTimers } from './sla-timers.js';

const ATTEMPTS = 5;

/**
 * Fires `sla.warning` and `sla.breached` when their timers (SlaTimers) fall due. A firing acts only on what holds
 * when it fires: the target still unmet (an answer or a close the event log's consumer has not applied yet counts:
 * the conversation's own fields and messages say so), and the deadline still where the timer was set (computed again
 * from the business hours and sleeps as they are now: a deadline that moved later is written and its timers set
 * again; one reached early, as after a crash, sets its timer again). The event goes in the same write that marks the
 * stage fired on the conversation, conditional on the SLA's version, so a firing repeated (after a crash, or by
 * another process) fires once.
 */
@Injectable()
export class SlaDeadlines implements OnModuleInit {
  constructor(
    private readonly timers: DurableTimers,
    private readonly slaTimers: SlaTimers,
    private readonly conversations: ConversationsRepository,
    private readonly messages: MessagesRepository,
    private readonly businessHours: BusinessHoursService,
  ) {}

  onModuleInit(): void {
    this.timers.register(SLA_TIMER, (timer) => this.fire(timer));
  }

  private async fire(timer: FiredTimer): Promise<void> {
    const [conversationId, metric, stage] = timer.key.split(':') as [string, SlaMetric, SlaStage];
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const conversation = await this.conversations.findById(timer.companyId, conversationId);
      const sla = conversation?.sla;
      const clock = sla?.clocks[metric];
      if (!conversation || !sla || !clock || (await this.met(conversation, metric, clock, timer.firedAt))) return;
      const calendar = await this.businessHours.calendar(timer.companyId);
      const counted = countedTimeOf(conversation, sla.targets, calendar);
      const current = clocksFor(sla.targets, factsOf(conversation.createdAt, sla), sla.waitingSince, sla.clocks, counted)[metric];
      if (!current) return;
      if (current.dueAt?.getTime() !== clock.dueAt?.getTime()) {
        if (await this.moved(conversation, sla, metric, current)) return;
        continue;
      }
      const at = stageAt(sla.targets, clock, stage);
      if (!at || (stage === 'warning' && timer.firedAt >= clock.dueAt!)) return;
      if (at > timer.firedAt) return this.timers.set(timer.companyId, SLA_TIMER, timer.key, at);
      if (await this.record(conversation, sla, metric, clock, stage)) return;
    }
    throw new Error(`The SLA of conversation ${conversationId} kept changing while its ${metric} ${stage} fired`);
  }

  /** Met by what the conversation shows, whether or not the event log's consumer has applied it yet. */
  private async met(conversation: Stored<Conversation>, metric: SlaMetric, clock: SlaClock, at: Date): Promise<boolean> {
    const happened = (instant: Date | null) => instant !== null && instant.getTime() <= at.getTime();
    if (happened(conversation.closedAt)) return true;
    if (metric === 'first_response') return happened(conversation.firstResponseAt);
    if (metric === 'next_response') return this.messages.agentAnsweredBetween(conversation.companyId, conversation._id, clock.startedAt, at);
    return false;
  }

  /** The deadline moved (business hours or sleeps changed): written, and its timers set again. */
  private async moved(conversation: Stored<Conversation>, sla: ConversationSla, metric: SlaMetric, clock: SlaClock): Promise<boolean> {
    const after: ConversationSla = { ...sla, clocks: { ...sla.clocks, [metric]: clock }, version: sla.version + 1 };
    if (!(await this.conversations.changeSla(conversation.companyId, conversation, { sla: after }))) return false;
    await this.slaTimers.settle(conversation.companyId, conversation._id, sla, after);
    return true;
  }

  /** Marks the stage fired, with its event, in one write conditional on the SLA's version. */
  private async record(conversation: Stored<Conversation>, sla: ConversationSla, metric: SlaMetric, clock: SlaClock, stage: SlaStage): Promise<boolean> {
    const fired: SlaClock = stage === 'breach' ? { ...clock, breached: true } : { ...clock, warned: true };
    const breaches = stage === 'breach' && !sla.breaches.includes(metric) ? [...sla.breaches, metric] : sla.breaches;
    const after: ConversationSla = { ...sla, clocks: { ...sla.clocks, [metric]: fired }, breaches, version: sla.version + 1 };
    const name = stage === 'breach' ? 'sla.breached' : 'sla.warning';
    const written = await this.conversations.changeSla(conversation.companyId, conversation, { sla: after }, (stored) => [
      stageEvent(
        name,
        { conversation: ConversationView.from(stored), metric, dueAt: clock.dueAt!.toISOString(), policyId: String(sla.policyId) },
        { occurredAt: stored.updatedAt },
      ),
    ]);
    return written !== null;
  }
}
