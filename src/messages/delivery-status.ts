import type { DeliveryStatus } from './message.schema.js';

/** What a channel connector reports: any status but the initial `pending`. */
export const REPORTED_STATUSES = ['sent', 'delivered', 'read', 'failed'] as const satisfies readonly DeliveryStatus[];
export type ReportedStatus = (typeof REPORTED_STATUSES)[number];

/** The line a message moves along; `failed` branches off it before delivery. */
const POSITION: Record<Exclude<DeliveryStatus, 'failed'>, number> = { pending: 0, sent: 1, delivered: 2, read: 3 };

/**
 * Whether a report of `to` moves a message at `from` forward (contract section 12): along pending → sent →
 * delivered → read, steps may be skipped; `failed` only from pending or sent; nothing leaves `failed` or `read`.
 * Anything else is a late or repeated report, which changes nothing.
 */
export function movesForward(from: DeliveryStatus, to: ReportedStatus): boolean {
  if (from === 'failed') return false;
  if (to === 'failed') return from === 'pending' || from === 'sent';
  return POSITION[to] > POSITION[from];
}

/** Whether `status` means the message reached the recipient: delivered, or read (which implies it). */
export function isDelivered(status: DeliveryStatus): boolean {
  return status === 'delivered' || status === 'read';
}
