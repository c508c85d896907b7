import { ForbiddenException } from '@nestjs/common';
import type { DomainEventData, DomainEventName } from './domain-events.js';

/**
 * The channels a credential or a webhook is limited to (contract section 13), as conversations name them
 * (`channelOf`: lower-cased); null: every channel.
 */
export type ChannelScope = readonly string[] | null;

/**
 * The channel of the conversation an event is about, as its data shows it: the conversation snapshot it carries.
 * Events whose data has no conversation say their channel when they are staged (`stageEvent`'s `channel`).
 */
export function channelOfData(data: DomainEventData[DomainEventName]): string | null {
  return 'conversation' in data ? data.conversation.channel : null;
}

/** Whether a credential limited to `scope` may act on `channel` (a channel not known is not in any scope). */
export function scopeAllows(scope: ChannelScope, channel: string | null | undefined): boolean {
  return scope === null || (channel != null && scope.includes(channel));
}

/**
 * Whether an event reaches a reader or a webhook limited to `scope`: its conversation is on one of those channels.
 * An event about no conversation (channel null) reaches every scope, as the contract says for webhooks.
 */
export function eventInScope(scope: ChannelScope, channel: string | null): boolean {
  return scope === null || channel === null || scope.includes(channel);
}

/**
 * Whether a credential limited to `scope` may see and manage a webhook limited to `channels`: each of them is in
 * the scope. A webhook of every channel (none listed) is beyond any limited scope.
 */
export function scopeCovers(scope: ChannelScope, channels: readonly string[] | null | undefined): boolean {
  return scope === null || (!!channels?.length && channels.every((channel) => scope.includes(channel)));
}

/** 403 unless a credential limited to `scope` may act on `subject`, which is on `channel` (e.g. "conversation 66..."). */
export function assertInScope(scope: ChannelScope, channel: string | null | undefined, subject: string): void {
  if (!scopeAllows(scope, channel)) {
    throw new ForbiddenException(`This API key is limited to the channels ${scope!.join(', ')}; ${subject} is on ${channel ?? 'another channel'}`);
  }
}
