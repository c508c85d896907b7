import { describe, expect, it } from '@jest/globals';
import { DOMAIN_EVENTS } from '../events/domain-events.js';
import { EXTERNAL_EVENT_NAMES, WEBHOOK_EVENT_NAMES, domainEventNamed, eventNamesOf, subscribedNameFor } from './webhook-events.js';

describe('webhook event names', () => {
  it.each([
    ['conversation.created', 'CONVERSATION_CREATED'],
    ['conversation.assigned', 'CONVERSATION_ASSIGNED'],
    ['conversation.closed', 'CONVERSATION_CLOSED'],
    ['conversation.note_added', 'NOTE_ADDED'],
    ['conversation.snoozed', 'CONVERSATION_SNOOZED'],
    ['conversation.unsnoozed', 'CONVERSATION_UNSNOOZED'],
    ['message.received', 'CHAT_RECEIVED'],
    ['message.sent', 'CHAT_SENT'],
    ['message.status_changed', 'CHAT_STATUS_CHANGED'],
    ['flow.executed', 'FLOW_EXECUTED'],
    ['conversation.priority_changed', 'CONVERSATION_PRIORITY_CHANGED'],
    ['sla.warning', 'SLA_WARNING'],
    ['sla.breached', 'SLA_BREACHED'],
    ['csat.submitted', 'CSAT_SUBMITTED'],
    ['conversation.transferred', 'CONVERSATION_TRANSFERRED'],
    ['conversation.queue_timeout', 'CONVERSATION_QUEUE_TIMEOUT'],
    ['agent.status_changed', 'AGENT_STATUS_CHANGED'],
    ['contact.merged', 'CONTACT_MERGED'],
    ['contact.merge_undone', 'CONTACT_MERGE_UNDONE'],
    ['contact.erased', 'CONTACT_ERASED'],
    ['privacy_request.completed', 'PRIVACY_REQUEST_COMPLETED'],
    ['automation.applied', 'AUTOMATION_APPLIED'],
  ] as const)('%s is %s on Interface B', (dotted, external) => {
    expect(EXTERNAL_EVENT_NAMES[dotted]).toBe(external);
    expect(eventNamesOf(dotted)).toEqual([dotted, external]);
    expect(domainEventNamed(external)).toBe(dotted);
    expect(domainEventNamed(dotted)).toBe(dotted);
  });

  it('accepts exactly the fifty-eight names, each once', () => {
    expect(WEBHOOK_EVENT_NAMES).toHaveLength(58);
    expect(DOMAIN_EVENTS).toHaveLength(29);
    expect(new Set(WEBHOOK_EVENT_NAMES).size).toBe(WEBHOOK_EVENT_NAMES.length);
    expect(WEBHOOK_EVENT_NAMES).not.toContain('message.created');
  });

  it('delivers under the name the webhook subscribed with', () => {
    expect(subscribedNameFor(['CHAT_RECEIVED'], 'message.received')).toBe('CHAT_RECEIVED');
    expect(subscribedNameFor(['message.received'], 'message.received')).toBe('message.received');
    expect(subscribedNameFor(['CHAT_SENT', 'conversation.closed'], 'conversation.closed')).toBe('conversation.closed');
  });

  it('picks the first listed form when a webhook lists both, and nothing when it lists neither', () => {
    expect(subscribedNameFor(['CHAT_SENT', 'message.sent'], 'message.sent')).toBe('CHAT_SENT');
    expect(subscribedNameFor(['message.sent', 'CHAT_SENT'], 'message.sent')).toBe('message.sent');
    expect(subscribedNameFor(['CHAT_SENT'], 'message.received')).toBeUndefined();
    expect(subscribedNameFor([], 'flow.executed')).toBeUndefined();
  });
});
