import { expect } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { AnyDomainEvent } from '../../src/events/domain-events.js';
import { EventConsumerLane } from '../../src/events/consumers/event-consumer-lane.schema.js';
import { EventRelay, EVENTS_LOGGED, type EventsLogged } from '../../src/events/event-relay.js';
import type { TestApp } from './test-app.js';
import { waitFor } from './wait-for.js';

/**
 * Waits until the app's reactions are done: everything written is in the event log, and every consumer has
 * handled the log up to its head and let go of its lane. Reactions run after the request that caused them
 * answers, so a test that looks at their effects settles first.
 */
export async function settle(...apps: TestApp[]): Promise<void> {
  const lanes = apps[0].model<EventConsumerLane>(EventConsumerLane.name).collection;
  await waitFor(
    async () => {
      for (const app of apps) await app.app.get(EventRelay).idle();
      const busy = await lanes.countDocuments({ $or: [{ leaseOwner: { $ne: null } }, { nextDueAt: { $lte: new Date() } }] });
      if (busy > 0) return false;
      const behind = (await lanes.find({}, { projection: { position: 1, head: 1 } }).toArray()).some((lane) => lane.position < lane.head);
      return !behind;
    },
    { timeoutMs: 15_000, message: 'the event log and its consumers to settle' },
  );
}

/** Records the events this app logs, in log order per company; `events()` first waits for the relay. */
export class EventRecorder {
  private recorded: AnyDomainEvent[] = [];

  constructor(private readonly t: TestApp) {
    t.app.get(EventEmitter2).on(EVENTS_LOGGED, (batch: EventsLogged) => this.recorded.push(...batch.events));
  }

  /** Forgets what was logged so far, once everything written so far is logged. */
  async clear(): Promise<void> {
    await this.t.app.get(EventRelay).idle();
    this.recorded = [];
  }

  /** What was logged since the last `clear`, once everything written so far is logged. */
  async events(): Promise<AnyDomainEvent[]> {
    await this.t.app.get(EventRelay).idle();
    return [...this.recorded];
  }

  /** Like `events`, after the consumers have reacted too (flows and auto-assignment log events of their own). */
  async settled(): Promise<AnyDomainEvent[]> {
    await settle(this.t);
    return [...this.recorded];
  }
}

/**
 * A logged domain event as a test expects it: any `evt_` id and sequence, the rest as given; its channel is that of the
 * conversation its data carries (an event whose data has none says its own, some channel).
 */
export function loggedEvent(type: string, companyId: string, occurredAt: unknown, data: unknown): Record<string, unknown> {
  const channel = (data as { conversation?: { channel?: unknown } } | null)?.conversation?.channel ?? expect.any(String);
  return { id: expect.stringMatching(/^evt_/), type, companyId, sequence: expect.any(Number), occurredAt, channel, data };
}
