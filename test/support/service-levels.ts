import { expect } from '@jest/globals';
import type { ConversationView } from '../../src/conversations/conversation.view.js';
import type { AnyDomainEvent, DomainEventName } from '../../src/events/domain-events.js';
import { LoggedEvent } from '../../src/events/event-log.schema.js';
import type { MessageView } from '../../src/messages/message.view.js';
import { settle } from './event-log.js';
import { createApiKey, registerCompany, uniqueEmail, type TestCompany } from './factories.js';
import type { TestApp } from './test-app.js';
import type { TestClock } from './test-clock.js';
import { waitFor } from './wait-for.js';

/** A company with an API key for its connector (inbound messages, ratings). */
export interface ServiceLevelsCompany extends TestCompany {
  key: string;
}

export async function companyWithKey(t: TestApp, name: string): Promise<ServiceLevelsCompany> {
  const company = await registerCompany(t.http, name);
  return { ...company, key: await createApiKey(t.http, company, ['messages:write']) };
}

/** A contact's message through the connector's route; answers the stored message and conversation. */
export async function inbound(
  t: TestApp,
  company: ServiceLevelsCompany,
  text: string,
  from: { email?: string; phone?: string } = { email: uniqueEmail('customer') },
  channel?: string,
): Promise<{ message: MessageView; conversation: ConversationView }> {
  const response = await t.http.post('/api/external/messages').set('x-api-key', company.key).send({ from, text, channel }).expect(201);
  return response.body.data;
}

/** An agent's (here the admin's) reply. */
export async function reply(t: TestApp, company: TestCompany, conversationId: string, text = 'On it'): Promise<MessageView> {
  return (await t.http.post(`/v1/conversations/${conversationId}/messages`).set(company.auth).send({ text }).expect(201)).body;
}

export async function createPolicy(t: TestApp, company: TestCompany, body: Record<string, unknown>): Promise<{ id: string }> {
  return (await t.http.post('/v1/sla-policies').set(company.auth).send(body).expect(201)).body;
}

export async function conversationOf(t: TestApp, company: TestCompany, id: string): Promise<ConversationView> {
  return (await t.http.get(`/v1/conversations/${id}`).set(company.auth).expect(200)).body;
}

/** The conversation once the log's consumers have reacted to everything written so far. */
export async function settled(t: TestApp, company: TestCompany, id: string): Promise<ConversationView> {
  await settle(t);
  return conversationOf(t, company, id);
}

/** The company's logged events of these types, in log order. */
export async function loggedOf(t: TestApp, company: TestCompany, ...types: DomainEventName[]): Promise<AnyDomainEvent[]> {
  return t
    .model<LoggedEvent>(LoggedEvent.name)
    .find({ companyId: company.companyId, type: { $in: types } })
    .sort({ sequence: 1 })
    .lean<AnyDomainEvent[]>();
}

/** Waits until the company has logged `count` events of `type` (a timer fired). */
export async function waitForLogged(t: TestApp, company: TestCompany, type: DomainEventName, count: number, timeoutMs = 10_000): Promise<AnyDomainEvent[]> {
  return waitFor(
    async () => {
      const events = await loggedOf(t, company, type);
      return events.length >= count && events;
    },
    { timeoutMs, message: `${count} ${type} event(s)` },
  );
}

/** Moves the clock to `at` (plus `extraMs`), never back. */
export function advanceTo(clock: TestClock, at: string | Date, extraMs = 0): void {
  const ms = new Date(at).getTime() + extraMs - clock.now().getTime();
  if (ms > 0) clock.advance(ms);
}

/** Time for a timer that is not due to fire anyway (more than two polls), so that a test can see it did not. */
export const quietly = () => new Promise((resolve) => setTimeout(resolve, 700));

export const plus = (at: string | Date, seconds: number) => new Date(new Date(at).getTime() + seconds * 1000).toISOString();

/** The data every SLA event carries. */
export function slaEvent(metric: string, dueAt: string, policyId: string, conversationId: string) {
  return { metric, dueAt, policyId, conversation: expect.objectContaining({ id: conversationId }) };
}
