import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { MERGE_RESUME_AFTER_MS } from '../../src/contact-merges/contact-merge-runner.js';
import { ContactMerge } from '../../src/contact-merges/contact-merge.schema.js';
import { Contact } from '../../src/contacts/contact.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { ConversationsRepository } from '../../src/conversations/conversations.repository.js';
import { Message } from '../../src/messages/message.schema.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { uniqueEmail } from '../support/factories.js';
import { companyWithKey, loggedOf, type ServiceLevelsCompany } from '../support/service-levels.js';
import type { TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

const BURST = 50;

/** Contract section 22 across two API processes on one database: bursts of first messages, and merges cut short. */
describe('contacts across processes', () => {
  const clock = new TestClock();
  let deployment: Deployment;
  let a: TestApp;
  let acme: ServiceLevelsCompany;

  beforeAll(async () => {
    deployment = await startDeployment('contact-merge', { THROTTLE_LIMIT: '100000' }, 2, clock);
    a = deployment.apps[0];
    acme = await companyWithKey(a, 'Burst');
  });
  afterAll(() => deployment.stop());

  async function burst(from: { phone?: string; email?: string }, channel: string): Promise<void> {
    const answers = await Promise.all(
      Array.from({ length: BURST }, (_, index) =>
        request(deployment.bases[index % deployment.bases.length])
          .post('/api/external/messages')
          .set('x-api-key', acme.key)
          .send({ from, text: `Message ${index}`, channel, externalId: `${channel}-${index}-${Object.values(from)[0]}` }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(BURST).fill(201));
    const conversationIds = new Set(answers.map((answer) => answer.body.data.conversation.id));
    expect(conversationIds.size).toBe(1);
    const [field, value] = Object.entries(from)[0];
    const contacts = await a
      .model<Contact>(Contact.name)
      .find({ companyId: acme.companyId, [field]: value })
      .lean();
    expect(contacts).toHaveLength(1);
    const open = await a.model<Conversation>(Conversation.name).find({ companyId: acme.companyId, contactId: contacts[0]._id, isOpen: true }).lean();
    expect(open.map((conversation) => conversation._id.toHexString())).toEqual([...conversationIds]);
    const messages = await a
      .model<Message>(Message.name)
      .countDocuments({ companyId: acme.companyId, conversationId: open[0]._id, direction: 'inbound' });
    expect(messages).toBe(BURST);
  }

  it(`makes one contact and one open conversation of ${BURST} concurrent first messages from a new phone`, async () => {
    await burst({ phone: '+14155559900' }, 'whatsapp');
  });

  it(`makes one contact and one open conversation of ${BURST} concurrent first messages from a new e-mail`, async () => {
    await burst({ email: uniqueEmail('burst') }, 'email');
  });

  /**
   * A process that stops in the middle of a merge or an undo (here its request never gets past moving the
   * conversations, and the process is shut down): the other process finishes it from its durable record once the
   * recovery timer falls due, and nothing shows it half done once it has.
   */
  it.each(['merge', 'undo'] as const)('finishes a %s whose process stopped half-way, from the other process', async (step) => {
    const dying = await deployment.add();
    const survivor = deployment.apps[1];
    const contacts = survivor.model<Contact>(Contact.name);
    const phone = `+1415555${step === 'merge' ? '77' : '88'}01`;
    const target = (
      await survivor.http
        .post('/v1/contacts')
        .set(acme.auth)
        .send({ name: `Crash ${step} T` })
        .expect(201)
    ).body;
    const source = (
      await survivor.http
        .post('/v1/contacts')
        .set(acme.auth)
        .send({ name: `Crash ${step} S`, phone })
        .expect(201)
    ).body;
    await request(deployment.bases[1])
      .post('/api/external/messages')
      .set('x-api-key', acme.key)
      .send({ from: { phone }, text: 'Hi', channel: 'whatsapp' })
      .expect(201);
    let mergeId: string | undefined;
    if (step === 'undo') {
      mergeId = (
        await survivor.http
          .post('/v1/contacts/merge')
          .set(acme.auth)
          .send({ targetId: target.id, sourceIds: [source.id] })
          .expect(200)
      ).body.mergeId;
    }
    // The dying process gets as far as the conversations, and no further.
    const stuck = step === 'merge' ? 'moveToContact' : 'moveBackToContact';
    const reached = new Promise<void>((resolve) => {
      jest.spyOn(dying.app.app.get(ConversationsRepository), stuck).mockImplementation(() => {
        resolve();
        return new Promise<void>(() => undefined);
      });
    });
    const path = step === 'merge' ? '/v1/contacts/merge' : `/v1/contacts/merges/${mergeId}/undo`;
    const cut = request(dying.base)
      .post(path)
      .set(acme.auth)
      .send(step === 'merge' ? { targetId: target.id, sourceIds: [source.id] } : {})
      .timeout(60_000);
    cut.catch(() => undefined);
    await reached;
    const half = await contacts.findOne({ companyId: acme.companyId, _id: source.id }).lean();
    expect(half?.mergeLock).toBeDefined();
    // Meanwhile a second merge of the same contact answers 409, never interleaves.
    const other = (
      await survivor.http
        .post('/v1/contacts')
        .set(acme.auth)
        .send({ name: `Crash ${step} other` })
        .expect(201)
    ).body;
    await survivor.http
      .post('/v1/contacts/merge')
      .set(acme.auth)
      .send({ targetId: target.id, sourceIds: [other.id] })
      .expect(409);
    cut.abort();
    await Promise.race([dying.app.close(), new Promise((resolve) => setTimeout(resolve, 5_000))]);

    clock.advance(MERGE_RESUME_AFTER_MS + 1_000);
    const record = await waitFor(
      async () => {
        const merge = await survivor.model<ContactMerge>(ContactMerge.name).findOne({ companyId: acme.companyId, targetId: target.id }).lean();
        return merge?.status === (step === 'merge' ? 'done' : 'undone') && merge;
      },
      { timeoutMs: 20_000, message: `the ${step} to be finished by the other process` },
    );
    const conversation = await survivor
      .model<Conversation>(Conversation.name)
      .findOne({
        companyId: acme.companyId,
        channel: 'whatsapp',
        originalContactId: { $exists: step === 'merge' },
        contactId: step === 'merge' ? target.id : source.id,
      })
      .lean();
    expect(conversation?.contact).toMatchObject({ phone });
    const stored = await contacts.find({ companyId: acme.companyId, _id: { $in: [target.id, source.id] } }).lean();
    expect(stored.filter((contact) => contact.mergeLock)).toEqual([]);
    const events = (await loggedOf(survivor, acme, step === 'merge' ? 'contact.merged' : 'contact.merge_undone')).filter(
      (event) => (event.data as { mergeId: string }).mergeId === record._id.toHexString(),
    );
    expect(events).toHaveLength(1);
    if (step === 'merge') {
      await survivor.http.get(`/v1/contacts/${source.id}`).set(acme.auth).expect(410);
      expect((await survivor.http.get(`/v1/contacts/${target.id}`).set(acme.auth).expect(200)).body.phone).toBe(phone);
    } else {
      expect((await survivor.http.get(`/v1/contacts/${source.id}`).set(acme.auth).expect(200)).body.phone).toBe(phone);
      expect((await survivor.http.get(`/v1/contacts/${target.id}`).set(acme.auth).expect(200)).body.phone).toBeNull();
    }
  });
});
