import { DOMAIN_EVENTS, EVENT_CATALOGUE, type DomainEventName, type ExternalEventName } from '../events/domain-events.js';

export type { ExternalEventName } from '../events/domain-events.js';

/** Interface B's names for the domain events (contract section 6), from the event catalogue. */
export const EXTERNAL_EVENT_NAMES: Readonly<Record<DomainEventName, ExternalEventName>> = EVENT_CATALOGUE;

/** A name a webhook may subscribe with: either form, and a webhook may mix them. */
export type WebhookEventName = DomainEventName | ExternalEventName;

export const WEBHOOK_EVENT_NAMES: readonly WebhookEventName[] = [...DOMAIN_EVENTS, ...Object.values(EXTERNAL_EVENT_NAMES)];

/** Both names of one domain event, dotted first. */
export function eventNamesOf(event: DomainEventName): [DomainEventName, ExternalEventName] {
  return [event, EXTERNAL_EVENT_NAMES[event]];
}

const DOMAIN_EVENT_BY_NAME = new Map<string, DomainEventName>(DOMAIN_EVENTS.flatMap((event) => eventNamesOf(event).map((name) => [name, event])));

/** The domain event a name of either form means (the event feed's `types` accept both, like webhooks). */
export function domainEventNamed(name: WebhookEventName): DomainEventName {
  return DOMAIN_EVENT_BY_NAME.get(name)!;
}

/**
 * The name under which a webhook receives `event`: the first of its subscribed names that means it,
 * so a webhook that listed both forms still gets one delivery, under the form it listed first.
 */
export function subscribedNameFor(subscribed: readonly string[], event: DomainEventName): WebhookEventName | undefined {
  const names: readonly string[] = eventNamesOf(event);
  return subscribed.find((name) => names.includes(name)) as WebhookEventName | undefined;
}
