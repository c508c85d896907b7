import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import type { AnyDomainEvent, DomainEventName } from '../events/domain-events.js';
import { causeOf } from '../events/event-cause.js';
import { parseDuration } from '../filters/index.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import type { TimerAnchor } from './automation-rule.schema.js';
import { AutomationRuleCache, type LoadedRule } from './automation-rule-cache.js';
import { RuleRunner } from './rule-runner.js';

export const RULE_TIMER = 'automation-rule';

/** The events that set, move or cancel time triggers. */
export const TIMER_ANCHOR_EVENTS: readonly DomainEventName[] = [
  'conversation.created',
  'message.received',
  'message.sent',
  'conversation.queued',
  'conversation.assigned',
  'conversation.closed',
];
const ANCHORS = new Set<string>(TIMER_ANCHOR_EVENTS);

interface RuleTimerPayload {
  ruleId: string;
  conversationId: string;
  /** The rule's version when the timer was set: a timer of an older version does nothing. */
  version: number;
  /** The depth of the event that set it (its `cause`), carried to the run. */
  triggerDepth: number;
}

type Move = 'set' | 'cancel' | null;

/** What an event does to a time trigger counting from `since`. */
function moveOf(since: TimerAnchor, event: AnyDomainEvent): Move {
  const data = event.data as { message?: { senderType?: string }; previousAgentId?: string | null };
  switch (since) {
    case 'created':
      return event.type === 'conversation.created' ? 'set' : null;
    case 'last_message':
      return event.type === 'message.received' || event.type === 'message.sent' ? 'set' : null;
    case 'last_contact_message':
      // An agent's or the bot's message answers it.
      return event.type === 'message.received' ? 'set' : event.type === 'message.sent' ? 'cancel' : null;
    case 'last_agent_message':
      if (event.type === 'message.received') return 'cancel';
      return event.type === 'message.sent' && data.message?.senderType === 'agent' ? 'set' : null;
    case 'status':
      // A reassignment (an agent before) keeps the status `human`: the time in it goes on.
      if (event.type === 'conversation.assigned') return data.previousAgentId ? null : 'set';
      return event.type === 'conversation.created' || event.type === 'conversation.queued' ? 'set' : null;
  }
}

/**
 * Time triggers (contract section 21) as durable timers, one per rule and conversation (re-setting moves it), set,
 * moved and cancelled by the events that anchor them, never by a scan of conversations. Closing cancels them all;
 * a closed conversation arms none. When one fires, it runs the rule only if the rule is still active at the version
 * that set it, on the conversation as it is then.
 */
@Injectable()
export class RuleTimers implements OnModuleInit {
  constructor(
    private readonly timers: DurableTimers,
    private readonly cache: AutomationRuleCache,
    private readonly runner: RuleRunner,
    private readonly conversations: ConversationsRepository,
  ) {}

  onModuleInit(): void {
    this.timers.register<RuleTimerPayload>(RULE_TIMER, (timer) => this.fire(timer));
  }

  /**
   * Sets, moves or cancels the timers of the company's time-triggered rules that `event` anchors. Any other event
   * (the rules' own triggers) moves none: not even on a closed conversation, whose `conversation.closed` cancelled
   * them already (a closed one is never reopened), so a rating or a note after the close writes nothing.
   */
  async anchor(companyId: string, rules: LoadedRule[], event: AnyDomainEvent): Promise<void> {
    if (!ANCHORS.has(event.type)) return;
    const conversation = (event.data as { conversation?: { id?: string; status?: string } }).conversation;
    if (!conversation?.id) return;
    const closed = event.type === 'conversation.closed' || conversation.status === 'closed';
    for (const { rule } of rules) {
      const timer = rule.trigger.timer!;
      const key = `${rule._id.toHexString()}:${conversation.id}`;
      const move = closed ? 'cancel' : moveOf(timer.since, event);
      if (move === 'cancel') await this.timers.cancel(companyId, RULE_TIMER, key);
      if (move !== 'set') continue;
      const dueAt = new Date(new Date(event.occurredAt).getTime() + parseDuration(timer.after)!);
      const payload: RuleTimerPayload = {
        ruleId: rule._id.toHexString(),
        conversationId: conversation.id,
        version: rule.version,
        triggerDepth: causeOf(event.data)?.depth ?? 0,
      };
      await this.timers.set(companyId, RULE_TIMER, key, dueAt, { ...payload });
    }
  }

  private async fire(timer: FiredTimer<RuleTimerPayload>): Promise<void> {
    const { ruleId, conversationId, version, triggerDepth } = timer.payload;
    const loaded = (await this.cache.of(timer.companyId)).timers.find((entry) => entry.rule._id.toHexString() === ruleId);
    // Deactivated, deleted or edited since it was set: an older version's timer does nothing.
    if (!loaded || loaded.rule.version !== version) return;
    const conversation = await this.conversations.findById(timer.companyId, conversationId);
    if (!conversation || conversation.status === 'closed') return;
    const firing = {
      key: `${ruleId}:timer:${conversationId}:${timer.dueAt.getTime()}`,
      trigger: { timer: loaded.rule.trigger.timer! },
      triggerDepth,
    };
    await this.runner.fire(timer.companyId, loaded, conversation, firing);
  }
}
