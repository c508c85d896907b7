import type { Types } from 'mongoose';
import { parseObjectId } from '../database/object-id.js';

export const WEBHOOK_ID_PREFIX = 'wh_';
export const DELIVERY_ID_PREFIX = 'dlv_';

/**
 * Webhooks and deliveries are stored under ObjectIds (so pagination and the cursor helpers work as
 * everywhere else) and shown with a prefix: `wh_<24 hex>`, `dlv_<24 hex>`.
 */
export function webhookPublicId(id: Types.ObjectId): string {
  return WEBHOOK_ID_PREFIX + id.toHexString();
}

export function deliveryPublicId(id: Types.ObjectId): string {
  return DELIVERY_ID_PREFIX + id.toHexString();
}

/** The stored id behind a public one; anything without the prefix and 24 hex digits is null (a 404). */
export function parsePublicId(prefix: string, value: string): Types.ObjectId | null {
  return value.startsWith(prefix) ? parseObjectId(value.slice(prefix.length)) : null;
}
