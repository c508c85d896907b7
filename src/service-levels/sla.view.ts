import { isoTimeOrNull as iso } from '../common/iso-time.js';
import { SLA_METRICS, type SlaMetric } from '../sla-policies/sla-metrics.js';
import type { ConversationSla } from './sla-state.js';

/** A conversation's SLA: the policy it took, what falls due when, and what it missed (contract section 16). */
export class ConversationSlaView {
  /**
   * The policy it took; null when none matches any more (after a priority change) and it keeps the targets it missed
   * @example 6650f0c2a1b2c3d4e5f60730
   */
  policyId: string | null;
  /** When the first agent answer is due; null once answered (or without that target) */
  firstResponseDueAt: string | null;
  /** When the agent's answer to the contact's waiting message is due; null while nothing waits for an answer */
  nextResponseDueAt: string | null;
  /** When the close is due; null once closed (or without that target) */
  resolutionDueAt: string | null;
  /**
   * The targets missed (each fired `sla.breached`)
   * @example ["first_response"]
   */
  breaches: SlaMetric[];

  static from(sla: ConversationSla | null | undefined): ConversationSlaView | null {
    if (!sla) return null;
    return {
      policyId: sla.policyId?.toHexString() ?? null,
      firstResponseDueAt: iso(sla.clocks.first_response?.dueAt),
      nextResponseDueAt: iso(sla.clocks.next_response?.dueAt),
      resolutionDueAt: iso(sla.clocks.resolution?.dueAt),
      breaches: SLA_METRICS.filter((metric) => sla.breaches.includes(metric)),
    };
  }
}
