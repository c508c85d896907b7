import { SetMetadata } from '@nestjs/common';
import type { AnyDomainEvent, DomainEventName } from '../domain-events.js';

export const CONSUMES_EVENTS = Symbol('parley:consumes-events');

/** What `@ConsumesEvents` declares of a consumer of the event log. */
export interface EventConsumerOptions {
  /** Stable: it keys the consumer's position in each company's log. */
  name: string;
  /** The events it reacts to; the others move its position without calling it. */
  types: readonly DomainEventName[];
  /** Events per call (default 100). */
  batchSize?: number;
  /** The first retry's wait after a failure, doubling with each further one (default 500 ms). */
  retryBackoffMs?: number;
}

/** The provider behind `@ConsumesEvents`. */
export interface EventHandler {
  /**
   * Handles a company's events, in log order. After a crash or a failure it is called again with events it may
   * already have handled, so every effect must be keyed by the event id. `events` is empty when the consumer was
   * nudged (EventConsumers.nudge) rather than given new events.
   */
  handle(companyId: string, events: AnyDomainEvent[]): Promise<void>;
}

/**
 * Makes a provider a durable consumer of the event log: EventConsumers finds it when the app starts and calls its
 * `handle` with each company's events in order, from a position kept in MongoDB, one worker at a time per company,
 * with retries (see docs/events.md and docs/extending.md).
 */
export const ConsumesEvents = (options: EventConsumerOptions): ClassDecorator => SetMetadata(CONSUMES_EVENTS, options);
