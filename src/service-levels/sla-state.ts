import type { Types } from 'mongoose';
import type { SlaMetric } from '../sla-policies/sla-metrics.js';
import type { SlaPolicy } from '../sla-policies/sla-policy.schema.js';
import { deadlineAfter, type CountedTime } from './counted-time.js';

/**
 * A conversation's service level (contract section 16), kept on the conversation (`Conversation.sla`): the targets of
 * the policy it took (a copy: a later change to the policy applies to conversations matched after it), its running
 * clocks, and the targets it missed. Pure functions here; SlaTracker keeps it in step with the event log.
 */

export const SLA_STAGES = ['warning', 'breach'] as const;
export type SlaStage = (typeof SLA_STAGES)[number];

export type SlaTargets = Pick<SlaPolicy, 'firstResponseSeconds' | 'nextResponseSeconds' | 'resolutionSeconds' | 'warnBeforeSeconds' | 'businessHoursOnly'>;

/** A target the conversation has still to meet: since when it counts, when it falls due, what has fired for it. */
export interface SlaClock {
  startedAt: Date;
  /** null: it never falls due (business hours never open). */
  dueAt: Date | null;
  warned: boolean;
  breached: boolean;
}

export type SlaClocks = Partial<Record<SlaMetric, SlaClock>>;

export interface ConversationSla {
  /** null: no policy matches any more (its priority changed), kept for the targets it missed. */
  policyId: Types.ObjectId | null;
  targets: SlaTargets;
  /** A copy of `targets.businessHoursOnly`, indexed: the conversations a change of business hours moves. */
  businessHoursOnly: boolean;
  /** The first agent answer, as the event log told it (the first-response clock stops there). */
  answeredAt: Date | null;
  /** The close, as the event log told it (every clock stops). */
  closedAt: Date | null;
  /** The contact's first message after an agent answer not answered yet: the next-response clock starts there. */
  waitingSince: Date | null;
  /** The running clocks: a met target (or one without a target) has none. */
  clocks: SlaClocks;
  /** The metrics missed, in the order they were first missed. */
  breaches: SlaMetric[];
  /** The event log's sequence of the last event applied (SlaTracker: an event is applied once). */
  sequence: number;
  /** Bumped by every write of it: writes are conditional on the version they were computed from. */
  version: number;
}

/** What the clocks follow: the opening, and what the event log has told of the conversation so far. */
export interface SlaFacts {
  createdAt: Date;
  isOpen: boolean;
  /** The first agent message (bot messages, auto-replies and notes are no answer). */
  firstResponseAt: Date | null;
}

export function factsOf(createdAt: Date, sla: Pick<ConversationSla, 'answeredAt' | 'closedAt'>): SlaFacts {
  return { createdAt, isOpen: sla.closedAt === null, firstResponseAt: sla.answeredAt };
}

export function targetsOf(policy: SlaPolicy): SlaTargets {
  return {
    firstResponseSeconds: policy.firstResponseSeconds ?? null,
    nextResponseSeconds: policy.nextResponseSeconds ?? null,
    resolutionSeconds: policy.resolutionSeconds ?? null,
    warnBeforeSeconds: policy.warnBeforeSeconds ?? null,
    businessHoursOnly: policy.businessHoursOnly,
  };
}

/** When each running target started: opening (first response, resolution) or the unanswered contact message. */
function startsOf(targets: SlaTargets, facts: SlaFacts, waitingSince: Date | null): [SlaMetric, Date, number][] {
  if (!facts.isOpen) return [];
  const starts: [SlaMetric, Date, number][] = [];
  if (targets.firstResponseSeconds && !facts.firstResponseAt) starts.push(['first_response', facts.createdAt, targets.firstResponseSeconds]);
  if (targets.nextResponseSeconds && waitingSince) starts.push(['next_response', waitingSince, targets.nextResponseSeconds]);
  if (targets.resolutionSeconds) starts.push(['resolution', facts.createdAt, targets.resolutionSeconds]);
  return starts;
}

/**
 * The clocks running for these facts, each due when its target of counted time has passed since it started. A clock
 * that keeps its start keeps what fired for it (once per cycle); a new start (a new next-response cycle) fires anew.
 */
export function clocksFor(targets: SlaTargets, facts: SlaFacts, waitingSince: Date | null, previous: SlaClocks, counted: CountedTime): SlaClocks {
  const clocks: SlaClocks = {};
  for (const [metric, startedAt, seconds] of startsOf(targets, facts, waitingSince)) {
    const before = previous[metric];
    const same = before?.startedAt.getTime() === startedAt.getTime();
    clocks[metric] = { startedAt, dueAt: deadlineAfter(startedAt, seconds, counted), warned: same && before.warned, breached: same && before.breached };
  }
  return clocks;
}

/** The instant a stage of a clock fires: the due time, or the warning `warnBeforeSeconds` (wall clock) before it. */
export function stageAt(targets: SlaTargets, clock: SlaClock, stage: SlaStage): Date | null {
  if (!clock.dueAt) return null;
  if (stage === 'breach') return clock.breached ? null : clock.dueAt;
  if (!targets.warnBeforeSeconds || clock.warned || clock.breached) return null;
  return new Date(clock.dueAt.getTime() - targets.warnBeforeSeconds * 1000);
}

/** The timer key of a clock's stage, within the conversation. */
export const stageKey = (metric: SlaMetric, stage: SlaStage) => `${metric}:${stage}`;

/** Every stage still to fire, by stageKey: the durable timers the conversation should have. */
export function pendingStages(sla: ConversationSla | null): Map<string, Date> {
  const pending = new Map<string, Date>();
  if (!sla) return pending;
  for (const [metric, clock] of Object.entries(sla.clocks) as [SlaMetric, SlaClock][]) {
    for (const stage of SLA_STAGES) {
      const at = stageAt(sla.targets, clock, stage);
      if (at) pending.set(stageKey(metric, stage), at);
    }
  }
  return pending;
}

/** Whether two states have the same running clocks and missed targets (what the stored record must show). */
export function sameClocks(a: ConversationSla | null, b: ConversationSla | null): boolean {
  if (!a || !b) return a === b;
  const stamp = (sla: ConversationSla) =>
    JSON.stringify([String(sla.policyId), sla.answeredAt, sla.closedAt, sla.waitingSince, sla.breaches, Object.entries(sla.clocks).sort(([x], [y]) => x.localeCompare(y))]);
  return stamp(a) === stamp(b);
}
