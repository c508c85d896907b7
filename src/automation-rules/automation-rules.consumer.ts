import { Injectable } from '@nestjs/common';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import { byConversation, eachConversation } from '../events/consumers/conversation-batches.js';
import type { AnyDomainEvent } from '../events/domain-events.js';
import { causeOf } from '../events/event-cause.js';
import { AutomationRuleCache, type CompanyRules, type LoadedRule } from './automation-rule-cache.js';
import { RULE_EVENTS } from './automation-rule.schema.js';
import { AutomationRunsRepository } from './automation-runs.repository.js';
import { RuleRunner } from './rule-runner.js';
import { RuleTimers, TIMER_ANCHOR_EVENTS } from './rule-timers.js';

export const AUTOMATION_RULES_CONSUMER = 'automation-rules';

/**
 * Automation rules as a durable consumer of the event log (contract section 21): each event fires the company's active
 * rules of its type (oldest first), once per rule and event (RuleRunner), and sets, moves or cancels the time
 * triggers it anchors (RuleTimers). A company without rules for an event costs a map lookup (AutomationRuleCache).
 * Rules and timers act on the event's conversation alone, so a batch's conversations are handled side by side, each
 * one's events in log order; an event of no conversation has nothing to fire or anchor.
 */
@Injectable()
@ConsumesEvents({ name: AUTOMATION_RULES_CONSUMER, types: [...new Set([...RULE_EVENTS, ...TIMER_ANCHOR_EVENTS])], batchSize: 50 })
export class AutomationRulesConsumer implements EventHandler {
  constructor(
    private readonly cache: AutomationRuleCache,
    private readonly runner: RuleRunner,
    private readonly timers: RuleTimers,
    private readonly conversations: ConversationsRepository,
    private readonly runs: AutomationRunsRepository,
  ) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const rules = await this.cache.of(companyId);
    const conversationOf = (event: AnyDomainEvent) => (event.data as { conversation?: { id?: string } }).conversation?.id;
    await eachConversation(byConversation(events, conversationOf), async (conversationId, conversationEvents) => {
      for (const event of conversationEvents) await this.handleEvent(companyId, rules, conversationId, event);
    });
  }

  private async handleEvent(companyId: string, rules: CompanyRules, conversationId: string, event: AnyDomainEvent): Promise<void> {
    if (rules.timers.length > 0) await this.timers.anchor(companyId, rules.timers, event);
    const matching = rules.byEvent.get(event.type);
    if (!matching) return;
    const triggerDepth = causeOf(event.data)?.depth ?? 0;
    let conversation = await this.conversations.findById(companyId, conversationId);
    const keyOf = (loaded: LoadedRule) => `${loaded.rule._id.toHexString()}:${event.id}`;
    // One read for the runs of every rule, not one per rule that does not match (200 rules: 200 reads an event).
    const recorded = await this.runs.byTriggerKeys(companyId, matching.map(keyOf));
    for (const loaded of matching) {
      if (!conversation) break;
      const key = keyOf(loaded);
      const firing = { key, trigger: { event: event.type, eventId: event.id }, triggerDepth, recorded: recorded.get(key) ?? null };
      // The next rule sees what this one changed: the runner answers the conversation as its run left it.
      conversation = await this.runner.fire(companyId, loaded, conversation, firing);
    }
  }
}
