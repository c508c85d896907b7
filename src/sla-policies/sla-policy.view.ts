import { PRIORITIES, type Priority } from '../conversations/conversation.schema.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { SlaPolicy } from './sla-policy.schema.js';

export class SlaConditionsView {
  /**
   * The conversation's priority must be one of these; empty: any
   * @example ["high"]
   */
  priorities: Priority[];
  /**
   * The conversation's channel must be one of these; empty: any
   * @example ["whatsapp"]
   */
  channels: string[];
}

/** Response-time targets, and which conversations they apply to (contract section 16). */
export class SlaPolicyView {
  /** @example 6650f0c2a1b2c3d4e5f60730 */
  id: string;
  /** @example "VIP: answer within 15 minutes" */
  name: string;
  /** Inactive policies match no conversation; conversations that matched it before keep their targets */
  isActive: boolean;
  conditions: SlaConditionsView;
  /**
   * From opening to the first agent message (bot messages, auto-replies and private notes do not count); null: no target
   * @example 900
   */
  firstResponseSeconds: number | null;
  /**
   * From each contact message that follows an agent answer to the next agent answer; null: no target
   * @example 3600
   */
  nextResponseSeconds: number | null;
  /**
   * From opening to close; null: no target
   * @example 86400
   */
  resolutionSeconds: number | null;
  /** Only open business hours (settings) count towards the targets; otherwise every second does */
  businessHoursOnly: boolean;
  /**
   * `sla.warning` fires this long before a target falls due (wall-clock seconds); null: no warning
   * @example 300
   */
  warnBeforeSeconds: number | null;
  createdAt: string;
  updatedAt: string;

  static from(policy: Stored<SlaPolicy>): SlaPolicyView {
    return {
      id: policy._id.toHexString(),
      name: policy.name,
      isActive: policy.isActive,
      conditions: {
        priorities: PRIORITIES.filter((priority) => policy.conditions.priorities.includes(priority)),
        channels: policy.conditions.channels,
      },
      firstResponseSeconds: policy.firstResponseSeconds ?? null,
      nextResponseSeconds: policy.nextResponseSeconds ?? null,
      resolutionSeconds: policy.resolutionSeconds ?? null,
      businessHoursOnly: policy.businessHoursOnly,
      warnBeforeSeconds: policy.warnBeforeSeconds ?? null,
      createdAt: policy.createdAt.toISOString(),
      updatedAt: policy.updatedAt.toISOString(),
    };
  }
}

export class DeletedSlaPolicyView {
  /** @example 6650f0c2a1b2c3d4e5f60730 */
  id: string;
  /** @example true */
  deleted: true;
}
