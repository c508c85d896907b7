import { Injectable } from '@nestjs/common';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import type { AnyDomainEvent } from '../events/domain-events.js';
import { causeOf } from '../events/event-cause.js';
import { AutomationRuleCache } from './automation-rule-cache.js';
import { RULE_EVENTS } from './automation-rule.schema.js';
import { RuleRunner } from './rule-runner.js';
import { RuleTimers, TIMER_ANCHOR_EVENTS } from './rule-timers.js';

export const AUTOMATION_RULES_CONSUMER = 'automation-rules';

/**
 * Automation rules as a durable consumer of the event log (contract section 21): each event fires the company's active
 * rules of its type (oldest first), once per rule and event (RuleRunner), and sets, moves or cancels the time
 * triggers it anchors (RuleTimers). A company without rules for an event costs a map lookup (AutomationRuleCache).
 */
@Injectable()
@ConsumesEvents({ name: AUTOMATION_RULES_CONSUMER, types: [...new Set([...RULE_EVENTS, ...TIMER_ANCHOR_EVENTS])], batchSize: 50 })
export class AutomationRulesConsumer implements EventHandler {
  constructor(
    private readonly cache: AutomationRuleCache,
    private readonly runner: RuleRunner,
    private readonly timers: RuleTimers,
    private readonly conversations: ConversationsRepository,
  ) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const rules = await this.cache.of(companyId);
    for (const event of events) {
      if (rules.timers.length > 0) await this.timers.anchor(companyId, rules.timers, event);
      const matching = rules.byEvent.get(event.type);
      const conversationId = (event.data as { conversation?: { id?: string } }).conversation?.id;
      if (!matching || !conversationId) continue;
      const triggerDepth = causeOf(event.data)?.depth ?? 0;
      let conversation = await this.conversations.findById(companyId, conversationId);
      for (const loaded of matching) {
        if (!conversation) break;
        const firing = { key: `${loaded.rule._id.toHexString()}:${event.id}`, trigger: { event: event.type, eventId: event.id }, triggerDepth };
        // The next rule sees what this one changed: the runner answers the conversation as its run left it.
        conversation = await this.runner.fire(companyId, loaded, conversation, firing);
      }
    }
  }
}
