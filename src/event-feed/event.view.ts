import { ApiProperty } from '@nestjs/swagger';
import type { AnyDomainEvent, DomainEventName } from '../events/domain-events.js';
import { EXTERNAL_EVENT_NAMES, type ExternalEventName } from '../webhooks/webhook-events.js';

/** Which names the feed shows: dotted on Interface A, Interface B's own names there. */
export type EventNaming = 'dotted' | 'external';

/** What an event of the log shows on either interface but its name. */
export abstract class LoggedEventView {
  /**
   * The same id as the webhook deliveries of this event carry
   * @example evt_Qm9vdHN0cmFwcGVkRXZlbnQ
   */
  id: string;
  /**
   * Increases strictly in the company's log order (numbers may be skipped)
   * @example 42
   */
  sequence: number;
  occurredAt: string;
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  companyId: string;
  /**
   * What a webhook delivery of the event carries: the snapshots of the records as the change left them
   * (`{ conversation }`, `{ message, conversation }`, `{ execution }`...; see docs/webhooks.md and docs/events.md)
   */
  @ApiProperty({ additionalProperties: true })
  data: object;

  protected static fields(event: AnyDomainEvent): LoggedEventView {
    return { id: event.id, sequence: event.sequence, occurredAt: event.occurredAt.toISOString(), companyId: event.companyId, data: event.data };
  }
}

/** One event of the log on Interface A: a list item, and the `data` of a stream frame. */
export class EventView extends LoggedEventView {
  /** @example message.received */
  type: DomainEventName;

  static from(event: AnyDomainEvent): EventView {
    return { ...LoggedEventView.fields(event), type: event.type };
  }
}

/** The same event on Interface B, under its Interface B name. */
export class ExternalEventView extends LoggedEventView {
  /** @example CHAT_RECEIVED */
  type: ExternalEventName;

  static from(event: AnyDomainEvent): ExternalEventView {
    return { ...LoggedEventView.fields(event), type: EXTERNAL_EVENT_NAMES[event.type] };
  }
}

export function eventView(event: AnyDomainEvent, naming: EventNaming): EventView | ExternalEventView {
  return naming === 'dotted' ? EventView.from(event) : ExternalEventView.from(event);
}

export class EventPageView {
  data: EventView[];
  /**
   * Never null: pass it back as `after` to continue. An empty `data` means caught up; the cursor stays usable,
   * so poll with it again later
   * @example ZTE6NDI6OWYzYzFhMmI
   */
  nextCursor: string;
}

export class ExternalEventPageView {
  /** @example true */
  success: true;
  data: ExternalEventView[];
  /**
   * Never null: pass it back as `after` to continue. An empty `data` means caught up; the cursor stays usable,
   * so poll with it again later
   * @example ZTE6NDI6OWYzYzFhMmI
   */
  nextCursor: string;
}
