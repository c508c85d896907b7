import type { AnyDomainEvent } from '../../events/domain-events.js';
import type { WebhookEventName } from '../webhook-events.js';

/** The body of every delivery (contract section 6). */
export interface WebhookPayload {
  id: string;
  type: WebhookEventName;
  timestamp: string;
  companyId: string;
  data: AnyDomainEvent['data'];
}

/** Serialized once, when the delivery is recorded: every attempt sends and signs these bytes. */
export function serializeEvent(event: AnyDomainEvent, type: WebhookEventName): string {
  const payload: WebhookPayload = {
    id: event.id,
    type,
    timestamp: event.occurredAt.toISOString(),
    companyId: event.companyId,
    data: event.data,
  };
  return JSON.stringify(payload);
}
