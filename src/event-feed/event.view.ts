import { ApiProperty } from '@nestjs/swagger';
import { DOMAIN_EVENTS, type AnyDomainEvent } from '../events/domain-events.js';
import { EXTERNAL_EVENT_NAMES } from '../webhooks/webhook-events.js';

/** Which names the feed shows: dotted on Interface A, Interface B's own names there. */
export type EventNaming = 'dotted' | 'external';

const DATA_DESCRIPTION =
  'What a webhook delivery of the event carries: the snapshots of the records as the change left them ' +
  '(`{ conversation }`, `{ message, conversation }`, `{ execution }`...; see "Webhooks" in the README)';

/** One event of the log, as the Interface A feed shows it (a list item, and the `data:` of a stream frame). */
export class EventView {
  @ApiProperty({ example: 'evt_Qm9vdHN0cmFwcGVkRXZlbnQ', description: 'The same id as the webhook deliveries of this event carry' })
  id: string;

  @ApiProperty({ enum: DOMAIN_EVENTS, example: 'message.received' })
  type: string;

  @ApiProperty({ example: 42, description: "Increases strictly in the company's log order (numbers may be skipped)" })
  sequence: number;

  @ApiProperty({ format: 'date-time' })
  occurredAt: string;

  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718' })
  companyId: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: DATA_DESCRIPTION })
  data: object;

  static from(event: AnyDomainEvent, naming: EventNaming): EventView {
    return {
      id: event.id,
      type: naming === 'dotted' ? event.type : EXTERNAL_EVENT_NAMES[event.type],
      sequence: event.sequence,
      occurredAt: event.occurredAt.toISOString(),
      companyId: event.companyId,
      data: event.data,
    };
  }
}

/** The same event on Interface B, under its Interface B name. */
export class ExternalEventView extends EventView {
  @ApiProperty({ enum: Object.values(EXTERNAL_EVENT_NAMES), example: 'CHAT_RECEIVED' })
  declare type: string;
}

const NEXT_CURSOR_DESCRIPTION =
  'Never null: pass it back as `after` to continue. An empty `data` means caught up; the cursor stays usable, ' +
  'so poll with it again later';

export class EventPageView {
  @ApiProperty({ type: [EventView] })
  data: EventView[];

  @ApiProperty({ example: 'ZTE6NDI6OWYzYzFhMmI', description: NEXT_CURSOR_DESCRIPTION })
  nextCursor: string;
}

export class ExternalEventPageView {
  @ApiProperty({ example: true })
  success: true;

  @ApiProperty({ type: [ExternalEventView] })
  data: ExternalEventView[];

  @ApiProperty({ example: 'ZTE6NDI6OWYzYzFhMmI', description: NEXT_CURSOR_DESCRIPTION })
  nextCursor: string;
}
