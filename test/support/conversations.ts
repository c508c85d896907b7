import { afterAll, beforeAll, beforeEach } from '@jest/globals';
import { AgentsRepository } from '../../src/agents/agents.repository.js';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { Conversation, type ConversationStatus } from '../../src/conversations/conversation.schema.js';
import type { ConversationView } from '../../src/conversations/conversation.view.js';
import { EventRecorder } from './event-log.js';
import { twoCompanies, uniqueEmail, type TestCompany } from './factories.js';
import { createTestApp, type TestApp } from './test-app.js';


/** A conversation of a REST answer as event snapshots show it: without the calling agent's reading of it, nor its place in a queue (a single GET's). */
export function asSnapshot<T extends object>(conversation: T): Omit<T, 'unreadCount' | 'lastReadAt' | 'queue'> {
  const {
    unreadCount: _unread,
    lastReadAt: _read,
    queue: _queue,
    ...snapshot
  } = conversation as T & { unreadCount?: unknown; lastReadAt?: unknown; queue?: unknown };
  return snapshot;
}

/** A conversations test file's app, its two companies and its event recorder, set once its beforeAll has run. */
export interface ConversationsSuite {
  t: TestApp;
  acme: TestCompany;
  globex: TestCompany;
  recorder: EventRecorder;
}

/**
 * The conversations test files' set-up (one app, two companies, the events of each test alone) and their helpers:
 * contacts, conversations started and moved through the API, stored records.
 */
export function conversationsSuite() {
  const suite = {} as ConversationsSuite;
  beforeAll(async () => {
    suite.t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme: suite.acme, globex: suite.globex } = await twoCompanies(suite.t.http));
    suite.recorder = new EventRecorder(suite.t);
  });
  beforeEach(async () => {
    await suite.recorder.clear();
  });
  afterAll(() => suite.t.close());
  const context = () => suite;

  /** A new contact of the company; its `contact.created` is not the test's subject, so it is dropped. */
  async function newContact(company: TestCompany): Promise<string> {
    const contact = await context().t.app
      .get(ContactIdentities)
      .findOrCreateByIdentity(company.companyId, { email: uniqueEmail('contact'), name: 'Grace' });
    await context().recorder.clear();
    return contact._id.toHexString();
  }

  /** Starts a conversation through the API; the events it caused are not the test's subject, so they are dropped. */
  async function start(company: TestCompany, body: Record<string, unknown> = {}): Promise<ConversationView> {
    const contactId = (body.contactId as string | undefined) ?? (await newContact(company));
    const response = await context().t.http
      .post('/v1/conversations')
      .set(company.auth)
      .send({ contactId, ...body })
      .expect(201);
    await context().recorder.clear();
    return response.body as ConversationView;
  }

  async function stored(company: TestCompany, id: string) {
    return context().t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean();
  }

  async function deactivate(company: TestCompany, agentId: string): Promise<void> {
    await context().t.app.get(AgentsRepository).updateOne(company.companyId, { _id: agentId }, { isActive: false });
  }

  /** Puts a new conversation of acme in `status` through the API. */
  async function conversationIn(status: ConversationStatus): Promise<ConversationView> {
    const { t, acme, recorder } = context();
    const conversation = await start(acme);
    const path = `/v1/conversations/${conversation.id}`;
    if (status === 'queued') await t.http.patch(path).set(acme.auth).send({ status: 'queued' }).expect(200);
    if (status === 'human') await t.http.post(`${path}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
    if (status === 'closed') await t.http.post(`${path}/close`).set(acme.auth).send({}).expect(200);
    await recorder.clear();
    return conversation;
  }

  return Object.assign(suite, { newContact, start, stored, deactivate, conversationIn });
}
