import type { AnyDomainEvent, DomainEventName } from '../events/domain-events.js';
import { scopeAllows, type ChannelScope } from '../events/event-channel.js';
import { encodeEventCursor } from './event-cursor.js';
import { eventView, type EventNaming } from './event.view.js';

/**
 * What one stream is sent: the events of `types` (null: all) of conversations on `channels` (null: any), under
 * `naming`. `key` is the same for equal filters.
 */
export interface StreamFilter {
  naming: EventNaming;
  types: ReadonlySet<DomainEventName> | null;
  channels: ChannelScope;
  key: string;
}

export function streamFilter(naming: EventNaming, types: readonly DomainEventName[] | null, channels: ChannelScope = null): StreamFilter {
  const listed = (names: readonly string[] | null) => (names ? [...names].sort().join(',') : '*');
  return { naming, types: types ? new Set(types) : null, channels, key: `${naming}:${listed(types)}:${listed(channels)}` };
}

/** A comment line: ignored by every Server-Sent Events reader, it keeps proxies and load balancers from closing the stream. */
export const KEEP_ALIVE_FRAME = ': keep-alive\n\n';

/** The last frame of a stream whose credential no longer holds: a comment (no reader takes it for an event) saying why it ends. */
export function credentialEndFrame(status: number): string {
  return `: this stream's credential no longer authenticates its caller (a new request with it answers ${status}); connect again with a valid one\n\n`;
}

/** One event as a Server-Sent Events frame: its cursor as `id`, its type as `event`, the list item's JSON as `data`. */
export function eventFrame(event: AnyDomainEvent, naming: EventNaming, tag: string): string {
  const view = eventView(event, naming);
  return `id: ${encodeEventCursor(event.sequence, tag)}\nevent: ${view.type}\ndata: ${JSON.stringify(view)}\n\n`;
}

/**
 * The frames of a run of one company's events, built once per filter and starting point, so a fan-out to
 * hundreds of streams serializes each event once per interface and hands every stream the same string.
 */
export class FrameBatch {
  private readonly chunks = new Map<string, string>();

  constructor(
    private readonly events: readonly AnyDomainEvent[],
    private readonly tag: string,
  ) {}

  /** The frames, as one string, of the events after `after` that `filter` wants. */
  for(filter: StreamFilter, after: number): string {
    const key = `${filter.key}@${after}`;
    let chunk = this.chunks.get(key);
    if (chunk === undefined) {
      chunk = this.events
        .filter((event) => event.sequence > after && (!filter.types || filter.types.has(event.type)) && scopeAllows(filter.channels, event.channel))
        .map((event) => eventFrame(event, filter.naming, this.tag))
        .join('');
      this.chunks.set(key, chunk);
    }
    return chunk;
  }
}
