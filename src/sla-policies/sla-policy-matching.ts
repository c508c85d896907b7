import type { Priority } from '../conversations/conversation.schema.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { SlaPolicy } from './sla-policy.schema.js';

/** What a policy's conditions look at. */
export interface SlaSubject {
  priority: Priority;
  channel: string;
}

/** Whether the policy's conditions hold for the conversation (an empty list matches any value). */
export function policyMatches(policy: SlaPolicy, subject: SlaSubject): boolean {
  const { priorities, channels } = policy.conditions;
  return (priorities.length === 0 || priorities.includes(subject.priority)) && (channels.length === 0 || channels.includes(subject.channel));
}

/** The first of `active` (oldest first) whose conditions hold, or null. */
export function firstMatching(active: readonly Stored<SlaPolicy>[], subject: SlaSubject): Stored<SlaPolicy> | null {
  return active.find((policy) => policyMatches(policy, subject)) ?? null;
}
