import { BadRequestException, GoneException, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import type { AnyDomainEvent, DomainEventName } from '../events/domain-events.js';
import type { ChannelScope } from '../events/event-channel.js';
import { EventLogHeadsRepository, EventLogRepository } from '../events/event-log.repository.js';
import { domainEventNamed, type WebhookEventName } from '../webhooks/webhook-events.js';
import { companyTag, decodeEventCursor, encodeEventCursor } from './event-cursor.js';

/** Where a reader of the feed starts: after `after` (null: no cursor given), in a log complete up to `logged`. */
export interface FeedStart {
  after: number | null;
  logged: number;
}

/** The domain events `types` names (either form), or null for all of them. */
export function eventTypesOf(types: readonly WebhookEventName[] | undefined): DomainEventName[] | null {
  return types ? [...new Set(types.map((name) => domainEventNamed(name)))] : null;
}

/**
 * The event feed's rules (contract section 10), shared by the list and the stream of both interfaces: a
 * company's log read in order, never past `logged` (an event another process is appending right now has a
 * sequence above it, so a reader never steps over it), from a cursor that must be this company's and must
 * not point before the oldest event the log still keeps.
 */
@Injectable()
export class EventFeed {
  constructor(
    private readonly config: AppConfig,
    private readonly log: EventLogRepository,
    private readonly heads: EventLogHeadsRepository,
  ) {}

  /** Checks `cursor` (400 malformed, foreign or ahead of the log; 410 older than the retention). */
  async start(companyId: string, cursor: string | undefined): Promise<FeedStart> {
    const logged = await this.heads.logged(companyId);
    if (cursor === undefined) return { after: null, logged };
    const after = decodeEventCursor(cursor, companyTag(companyId));
    if (after > logged) throw new BadRequestException("This event cursor is ahead of your company's event log");
    if (after < logged) {
      // Events follow the cursor: the first of them must still be kept (numbers skipped by a republish aside).
      const oldest = await this.log.oldestSequence(companyId);
      if (oldest === null || oldest > after + 1) {
        throw new GoneException(
          `Events after this cursor are no longer kept (EVENT_RETENTION_DAYS is ${this.config.eventRetentionDays}): ` +
            'list again without `after` to start from the oldest event kept',
        );
      }
    }
    return { after, logged };
  }

  /**
   * One page, oldest first, each event as `view` shows it; `nextCursor` is never null (at the log's end it stays where
   * the log ends). `scope`: only events of conversations on these channels (a channel-scoped key's feed), filtered
   * in the read like `types`, so a page is full unless it reaches the log's end.
   */
  async page<V>(
    companyId: string,
    query: { after?: string; types?: WebhookEventName[]; limit: number },
    view: (event: AnyDomainEvent) => V,
    scope: ChannelScope = null,
  ): Promise<{ data: V[]; nextCursor: string }> {
    const { after, logged } = await this.start(companyId, query.after);
    const from = after ?? 0;
    const types = eventTypesOf(query.types) ?? undefined;
    const events = await this.log.range(companyId, { after: from, until: logged, types, channels: scope ?? undefined }, query.limit);
    const end = events.length === query.limit ? events[events.length - 1].sequence : Math.max(from, logged);
    return { data: events.map((event) => view(event)), nextCursor: encodeEventCursor(end, companyTag(companyId)) };
  }
}
