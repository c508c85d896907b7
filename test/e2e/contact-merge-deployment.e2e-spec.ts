import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import request from 'supertest';
import { MERGE_RESUME_AFTER_MS } from '../../src/contact-merges/contact-merge-runner.js';
import { ContactMerge } from '../../src/contact-merges/contact-merge.schema.js';
import { contactSummaryOf } from '../../src/contacts/contact-summary-changed.js';
import { Contact } from '../../src/contacts/contact.schema.js';
import type { ContactView } from '../../src/contacts/contact.view.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import type { ConversationView } from '../../src/conversations/conversation.view.js';
import { Message } from '../../src/messages/message.schema.js';
import { startDeployment, type ApiProcess, type Deployment } from '../support/deployment.js';
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
  }, 120_000);
  afterAll(() => deployment.stop(), 60_000);

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
    const contacts = await a
      .model<Contact>(Contact.name)
      .find({ companyId: acme.companyId, $or: Object.entries(from).map(([field, value]) => ({ [field]: value })) })
      .lean();
    expect(contacts).toHaveLength(1);
    expect(contacts[0]).toMatchObject(from);
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

  it(`makes one contact and one open conversation of ${BURST} concurrent first messages from a new phone with an e-mail`, async () => {
    await burst({ phone: '+14155559901', email: uniqueEmail('burst-both') }, 'whatsapp');
  });

  describe('a merge or an undo killed half-way', () => {
    /** A crash test takes seconds on a quiet machine, minutes on a loaded one (the timeouts are bounds, not waits). */
    const CRASH_TEST_TIMEOUT_MS = 240_000;
    /**
     * The processes the crash tests kill, one each, started before the tests (~9 s each on a quiet machine) while nothing
     * else runs: a start during a test's bulk inserts takes much longer.
     */
    const dying: ApiProcess[] = [];
    beforeAll(async () => {
      dying.push(await deployment.spawn(), await deployment.spawn());
    }, 150_000);
    /** Sources of a crashed merge: enough that a kill lands between one source's steps and the next one's. */
    const SOURCES = 8;
    /** Closed conversations per source, inserted in bulk, so that moving each source's takes a while. */
    const HISTORY = 500;

    interface Family {
      target: ContactView;
      sources: ContactView[];
      /** Each source's open conversation: the target has one open on the same channel, so the merge closes it. */
      clashing: string[];
      conversations: number;
    }

    /**
     * A target and SOURCES contacts, each source with one open conversation on a channel of its own (where the target
     * has one open too) and HISTORY closed ones there, all bulk-inserted.
     */
    async function family(name: string, exchange: string): Promise<Family> {
      const create = async (body: object): Promise<ContactView> => (await a.http.post('/v1/contacts').set(acme.auth).send(body).expect(201)).body;
      const target = await create({ name: `${name} target`, email: uniqueEmail(name) });
      const sources = [];
      for (let index = 0; index < SOURCES; index++)
        sources.push(await create({ name: `${name} ${index}`, phone: `+1415${exchange}${String(index).padStart(4, '0')}` }));
      const conversations = a.model<Conversation>(Conversation.name);
      const now = new Date();
      const conversation = (contact: ContactView, channel: string, open: boolean) => ({
        ...new conversations({
          companyId: acme.companyId,
          contactId: contact.id,
          contact: contactSummaryOf(contact),
          channel,
          status: open ? 'human' : 'closed',
          isOpen: open,
          closedAt: open ? null : now,
        }).toObject(),
        companyId: new Types.ObjectId(acme.companyId),
        createdAt: now,
        updatedAt: now,
      });
      const docs = sources.flatMap((source, index) => [
        conversation(target, `${name}-${index}`, true),
        conversation(source, `${name}-${index}`, true),
        ...Array.from({ length: HISTORY }, () => conversation(source, `${name}-${index}`, false)),
      ]);
      await conversations.collection.insertMany(docs);
      const clashing = docs.filter((doc) => doc.isOpen && !doc.contactId.equals(target.id)).map((doc) => doc._id.toHexString());
      return { target, sources, clashing, conversations: SOURCES * (HISTORY + 1) };
    }

    const ofSources = (people: Family) => ({ companyId: acme.companyId, contactId: { $in: people.sources.map((source) => source.id) } });
    const movedBy = (mergeId: Types.ObjectId) => ({ companyId: acme.companyId, 'mergeHistory.mergeId': mergeId });

    /** Kills `api` (SIGKILL) as soon as `half` sees the operation half done in the stored state. */
    async function killWhenHalfDone(api: ApiProcess, half: () => Promise<boolean>): Promise<void> {
      await waitFor(half, { timeoutMs: 30_000, intervalMs: 10, message: 'the operation to be half done' });
      await api.kill();
    }

    /**
     * Past the recovery timer's due time and past the lease (LEASE_MS, 30 s, src/lanes/durable-timers.ts) the killed
     * process holds on it when its run was slow enough for its own worker to claim the timer.
     */
    const RECOVERY_DUE_MS = MERGE_RESUME_AFTER_MS + 30_000 + 1_000;

    /** The other processes finish it once its recovery timer is due; the clock goes back after, for the next process. */
    async function recovered(mergeId: Types.ObjectId, status: 'done' | 'undone'): Promise<void> {
      clock.advance(RECOVERY_DUE_MS);
      try {
        await waitFor(
          async () => (await a.model<ContactMerge>(ContactMerge.name).findOne({ companyId: acme.companyId, _id: mergeId }).lean())?.status === status,
          { timeoutMs: 90_000, intervalMs: 100, message: `the ${status === 'done' ? 'merge' : 'undo'} to be finished by the other processes` },
        );
      } finally {
        clock.advance(-RECOVERY_DUE_MS);
      }
    }

    async function expectUnlocked(people: Family): Promise<void> {
      const ids = [people.target.id, ...people.sources.map((source) => source.id)];
      expect(
        await a.model<Contact>(Contact.name).countDocuments({ companyId: acme.companyId, _id: { $in: ids }, mergeLock: { $exists: true } }),
      ).toBe(0);
    }

    async function loggedFor(type: 'contact.merged' | 'contact.merge_undone', mergeId: Types.ObjectId) {
      return (await loggedOf(a, acme, type)).filter((event) => (event.data as { mergeId: string }).mergeId === mergeId.toHexString());
    }

    /** A merge whose process is killed (SIGKILL) with some sources' conversations moved and others not. */
    async function crashedMerge(people: Family, dying: ApiProcess): Promise<Types.ObjectId> {
      const conversations = a.model<Conversation>(Conversation.name);
      const merges = a.model<ContactMerge>(ContactMerge.name);
      const cut = request(dying.base)
        .post('/v1/contacts/merge')
        .set(acme.auth)
        .send({ targetId: people.target.id, sourceIds: people.sources.map((source) => source.id) });
      cut.catch(() => undefined);
      let mergeId: Types.ObjectId | undefined;
      await killWhenHalfDone(dying, async () => {
        mergeId ??= (await merges.findOne({ companyId: acme.companyId, targetId: people.target.id }).lean())?._id;
        return !!mergeId && (await conversations.countDocuments(movedBy(mergeId))) > 0;
      });
      // Half merged, as the process left it: some of the sources' conversations moved, not all.
      expect(await conversations.countDocuments(ofSources(people))).toBeGreaterThan(0);
      expect(await merges.findOne({ companyId: acme.companyId, _id: mergeId }).lean()).toMatchObject({ status: 'running' });
      return mergeId!;
    }

    it(
      'finishes a merge whose process was killed half-way, exactly once, from the other processes',
      async () => {
        const people = await family('crash-merge', '661');
        const mergeId = await crashedMerge(people, dying[0]);
        // Its contacts stay locked until it is finished: another merge of them answers 409 and never interleaves.
        const other = (await a.http.post('/v1/contacts').set(acme.auth).send({ name: 'crash-merge other' }).expect(201)).body;
        await a.http
          .post('/v1/contacts/merge')
          .set(acme.auth)
          .send({ targetId: people.target.id, sourceIds: [other.id] })
          .expect(409);

        await recovered(mergeId, 'done');
        const conversations = a.model<Conversation>(Conversation.name);
        expect(await conversations.countDocuments(ofSources(people))).toBe(0);
        // Every conversation moved once: one entry of this merge in its history, on the target, with the target's copy.
        expect(await conversations.countDocuments({ ...movedBy(mergeId), contactId: people.target.id, mergeHistory: { $size: 1 } })).toBe(
          people.conversations,
        );
        expect(await conversations.countDocuments({ ...movedBy(mergeId), 'contact.email': { $ne: people.target.email } })).toBe(0);
        // Each clash closed once, and the target keeps one open conversation per channel. A close the killed process
        // wrote reaches the log once the pending-event sweep relays it.
        const clashesClosed = async () =>
          (await loggedOf(a, acme, 'conversation.closed'))
            .map((event) => (event.data as { conversation: ConversationView }).conversation.id)
            .filter((id) => people.clashing.includes(id));
        await waitFor(async () => (await clashesClosed()).length >= people.clashing.length, {
          timeoutMs: 30_000,
          message: 'every clash to be closed in the log',
        });
        expect((await clashesClosed()).sort()).toEqual([...people.clashing].sort());
        expect(await conversations.countDocuments({ companyId: acme.companyId, contactId: people.target.id, isOpen: true })).toBe(SOURCES);
        expect(await loggedFor('contact.merged', mergeId)).toHaveLength(1);
        for (const source of people.sources) {
          expect((await a.http.get(`/v1/contacts/${source.id}`).set(acme.auth).expect(410)).body).toMatchObject({ mergedInto: people.target.id });
        }
        expect((await a.http.get(`/v1/contacts/${people.target.id}`).set(acme.auth).expect(200)).body.phone).toBe(people.sources[0].phone);
        await expectUnlocked(people);
      },
      CRASH_TEST_TIMEOUT_MS,
    );

    it(
      'finishes an undo whose process was killed half-way, exactly once, from the other processes',
      async () => {
        const people = await family('crash-undo', '662');
        const { mergeId } = (
          await a.http
            .post('/v1/contacts/merge')
            .set(acme.auth)
            .send({ targetId: people.target.id, sourceIds: people.sources.map((source) => source.id) })
            .expect(200)
        ).body;
        const id = new Types.ObjectId(mergeId as string);
        const contacts = a.model<Contact>(Contact.name);
        const stillMerged = () => contacts.countDocuments({ companyId: acme.companyId, mergeId: id });
        const cut = request(dying[1].base).post(`/v1/contacts/merges/${mergeId}/undo`).set(acme.auth).send({});
        cut.catch(() => undefined);
        await killWhenHalfDone(dying[1], async () => (await stillMerged()) < SOURCES);
        // Half undone, as the process left it: some sources are back, others still tombstones.
        expect(await stillMerged()).toBeGreaterThan(0);
        expect(await a.model<ContactMerge>(ContactMerge.name).findOne({ companyId: acme.companyId, _id: id }).lean()).toMatchObject({
          status: 'undoing',
        });

        await recovered(id, 'undone');
        const conversations = a.model<Conversation>(Conversation.name);
        expect(await stillMerged()).toBe(0);
        expect(await conversations.countDocuments(movedBy(id))).toBe(0);
        for (const [index, source] of people.sources.entries()) {
          expect((await a.http.get(`/v1/contacts/${source.id}`).set(acme.auth).expect(200)).body).toMatchObject({
            phone: source.phone,
            name: source.name,
          });
          expect(
            await conversations.countDocuments({
              companyId: acme.companyId,
              contactId: source.id,
              channel: `crash-undo-${index}`,
              'contact.phone': source.phone,
            }),
          ).toBe(HISTORY + 1);
        }
        expect(await conversations.countDocuments({ companyId: acme.companyId, contactId: people.target.id })).toBe(SOURCES);
        expect((await a.http.get(`/v1/contacts/${people.target.id}`).set(acme.auth).expect(200)).body.phone).toBeNull();
        expect(await loggedFor('contact.merge_undone', id)).toHaveLength(1);
        await expectUnlocked(people);
      },
      CRASH_TEST_TIMEOUT_MS,
    );
  });
});
