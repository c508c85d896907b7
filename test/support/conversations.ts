import { AgentsRepository } from '../../src/agents/agents.repository.js';
import { ContactsService } from '../../src/contacts/contacts.service.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import type { EventRecorder } from './event-log.js';
import { uniqueEmail, type TestCompany } from './factories.js';
import type { TestApp } from './test-app.js';

/** A conversation as Interface A answers it. */
export interface ConversationBody {
  id: string;
  contactId: string;
  channel: string;
  status: string;
  priority: string;
  assignedAgentId: string | null;
  assignedAt: string | null;
  assignedBy: { kind: string; id: string | null } | null;
  tags: string[];
  subject: string | null;
  lastMessageAt: string | null;
  firstResponseAt: string | null;
  queuedAt: string | null;
  closedAt: string | null;
  closeReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export type Status = 'bot' | 'queued' | 'human' | 'closed';

/** What the helpers need from a conversations test file, read when they run (after its beforeAll). */
interface ConversationsTestContext {
  t: TestApp;
  acme: TestCompany;
  recorder: EventRecorder;
}

/** The conversation test files' helpers: contacts, conversations started and moved through the API, stored records. */
export function conversationHelpers(context: () => ConversationsTestContext) {
  async function newContact(company: TestCompany): Promise<string> {
    const contact = await context().t.app
      .get(ContactsService)
      .findOrCreateByIdentity(company.companyId, { email: uniqueEmail('contact'), name: 'Grace' });
    return contact._id.toHexString();
  }

  /** Starts a conversation through the API; the events it caused are not the test's subject, so they are dropped. */
  async function start(company: TestCompany, body: Record<string, unknown> = {}): Promise<ConversationBody> {
    const contactId = (body.contactId as string | undefined) ?? (await newContact(company));
    const response = await context().t.http
      .post('/v1/conversations')
      .set(company.auth)
      .send({ contactId, ...body })
      .expect(201);
    await context().recorder.clear();
    return response.body as ConversationBody;
  }

  async function stored(company: TestCompany, id: string) {
    return context().t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean();
  }

  async function deactivate(company: TestCompany, agentId: string): Promise<void> {
    await context().t.app.get(AgentsRepository).updateOne(company.companyId, { _id: agentId }, { isActive: false });
  }

  /** Puts a new conversation of acme in `status` through the API. */
  async function conversationIn(status: Status): Promise<ConversationBody> {
    const { t, acme, recorder } = context();
    const conversation = await start(acme);
    const path = `/v1/conversations/${conversation.id}`;
    if (status === 'queued') await t.http.patch(path).set(acme.auth).send({ status: 'queued' }).expect(200);
    if (status === 'human') await t.http.post(`${path}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
    if (status === 'closed') await t.http.post(`${path}/close`).set(acme.auth).send({}).expect(200);
    await recorder.clear();
    return conversation;
  }

  return { newContact, start, stored, deactivate, conversationIn };
}
