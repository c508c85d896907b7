import type { DomainEvent } from '../../src/events/domain-events.js';
import { EventLogRepository } from '../../src/events/event-log.repository.js';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { EventRelay } from '../../src/events/event-relay.js';
import { stageEvent } from '../../src/events/pending-event.schema.js';
import type { TestApp } from './test-app.js';

export interface PublishOptions {
  /** `executionId` of the events: `<label>-<i>`. */
  label?: string;
  /** Makes each event about this many bytes bigger. */
  padding?: number;
  /** Logs them all in one append (one EVENTS_LOGGED batch) instead of one after another. */
  oneBatch?: boolean;
}

/**
 * Logs `count` `flow.executed` events for the company, as an extension publishing its own events would
 * (EventPublisher), and answers them as logged (ids and sequences).
 */
export async function publishEvents(t: TestApp, companyId: string, count: number, options: PublishOptions = {}): Promise<DomainEvent<'flow.executed'>[]> {
  const { label = 'run', padding = 0 } = options;
  const data = (i: number) => ({
    execution: {
      executionId: `${label}-${i}`,
      flowId: 'flow',
      conversationId: 'conversation',
      status: 'completed' as const,
      steps: padding ? [{ type: 'send_message', status: 'completed' as const, error: 'x'.repeat(padding) }] : [],
    },
  });
  if (options.oneBatch) {
    const events = Array.from({ length: count }, (_, i) => stageEvent('flow.executed', data(i)));
    await t.app.get(EventRelay).relay(companyId, [{ source: null, docId: null, events }]);
    return (await t.app.get(EventLogRepository).byIds(companyId, events.map((event) => event.id))) as DomainEvent<'flow.executed'>[];
  }
  const published: DomainEvent<'flow.executed'>[] = [];
  for (let i = 0; i < count; i++) published.push(await t.app.get(EventPublisher).publish(companyId, 'flow.executed', data(i)));
  return published;
}

/** API processes on one engine of their own, each listening on 127.0.0.1: a small deployment. */
