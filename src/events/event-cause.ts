import type { PendingEvent } from './pending-event.schema.js';

/**
 * What caused an event an automation rule's action emitted (contract section 21): the rule, its run, and how many
 * rules deep the chain is (1: a rule reacting to an event no rule caused). Carried in the event's `data`.
 */
export interface EventCause {
  ruleId: string;
  runId: string;
  depth: number;
}

/** The event with `cause` in its data; as it was without one. */
export function causedBy(event: PendingEvent, cause: EventCause | undefined): PendingEvent {
  return cause ? { ...event, data: { ...event.data, cause } as unknown as PendingEvent['data'] } : event;
}

/** The cause an event's data carries, or null. */
export function causeOf(data: unknown): EventCause | null {
  const cause = (data as { cause?: EventCause } | null)?.cause;
  return cause && typeof cause.depth === 'number' ? cause : null;
}
