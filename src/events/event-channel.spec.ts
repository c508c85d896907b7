import { describe, expect, it } from '@jest/globals';
import type { ConversationView } from '../conversations/conversation.view.js';
import { channelOfData, eventInScope, scopeAllows } from './event-channel.js';

const conversation = { id: 'c', channel: 'whatsapp' } as ConversationView;

describe('channel scopes', () => {
  it('read an event’s channel from the conversation its data carries, and none from other data', () => {
    expect(channelOfData({ conversation })).toBe('whatsapp');
    expect(channelOfData({ conversation, reason: null })).toBe('whatsapp');
    expect(channelOfData({ execution: { executionId: 'e', flowId: 'f', conversationId: 'c', status: 'completed', steps: [] } })).toBeNull();
  });

  it.each([
    [null, 'sms', true],
    [null, null, true],
    [['whatsapp'], 'whatsapp', true],
    [['whatsapp'], 'sms', false],
    [['whatsapp'], null, false],
    [['whatsapp'], undefined, false],
  ] as const)('let a credential limited to %j act on %j: %j', (scope, channel, allowed) => {
    expect(scopeAllows(scope, channel)).toBe(allowed);
  });

  it.each([
    [null, 'sms', true],
    [['whatsapp', 'email'], 'email', true],
    [['whatsapp'], 'sms', false],
    [['whatsapp'], null, true],
  ] as const)('send a webhook limited to %j the events of channel %j: %j', (scope, channel, reaches) => {
    expect(eventInScope(scope, channel)).toBe(reaches);
  });
});
