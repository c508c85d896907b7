import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { PrivacyRequest } from '../../src/privacy/privacy-request.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { waitFor } from '../support/wait-for.js';

const MESSAGES = 1200;

/**
 * Two API processes on one database. A process that died in the middle of an erasure (kill -9) leaves its request
 * `running` at the step it had reached, some messages erased and some not, and its timer leased by a worker that is
 * gone: that state is written here as such a process leaves it, and the live processes must finish the erasure, once.
 */
describe('privacy: an erasure interrupted by a crash finishes once (two processes)', () => {
  let deployment: Deployment;
  let acme: TestCompany;
  let contactId: string;
  let conversationId: string;

  beforeAll(async () => {
    // Delayed, so that no live process starts it before the crash state is in place.
    deployment = await startDeployment('privacycrash', { PRIVACY_ERASE_DELAY_HOURS: '1' });
    const [a] = deployment.apps;
    acme = await registerCompany(a.http, 'Acme');
    const key = await createApiKey(a.http, acme, ['messages:write']);
    const inbound = await a.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .send({ from: { phone: '+14155550199' }, text: 'wobblequince 0' })
      .expect(201);
    conversationId = inbound.body.data.conversation.id;
    contactId = inbound.body.data.conversation.contactId;
    const now = Date.now();
    await a.model('Message').collection.insertMany(
      Array.from({ length: MESSAGES - 1 }, (_, index) => ({
        companyId: new Types.ObjectId(acme.companyId),
        conversationId: new Types.ObjectId(conversationId),
        direction: 'inbound',
        type: 'text',
        text: `wobblequince ${index + 1}`,
        caption: null,
        media: null,
        senderType: 'contact',
        senderId: null,
        createdAt: new Date(now + index),
        updatedAt: new Date(now + index),
      })),
    );
  });
  afterAll(() => deployment.stop());

  it('is taken over by a live process, goes on from its step, and completes with its events once', async () => {
    const [a, b] = deployment.apps;
    const accepted = await a.http.post(`/v1/contacts/${contactId}/erase`).set(acme.auth).send({}).expect(202);
    const requestId = accepted.body.id as string;
    expect(accepted.body.status).toBe('pending');

    // What the dead process left: its request at step 1 (kept answers done), the first batch of messages erased, its
    // timer leased by a worker that no longer renews it (the lease has lapsed).
    const db = a.model('Message').db.db!;
    const company = new Types.ObjectId(acme.companyId);
    await a
      .model<PrivacyRequest>(PrivacyRequest.name)
      .updateOne({ _id: requestId, companyId: acme.companyId }, { $set: { status: 'running', step: 1 } });
    const firstBatch = await db
      .collection('messages')
      .find({ companyId: company }, { projection: { _id: 1 }, sort: { createdAt: 1 }, limit: 500 })
      .toArray();
    await db.collection('messages').updateMany({ _id: { $in: firstBatch.map((row) => row._id) } }, { $set: { text: null, erasedAt: new Date() } });
    const past = new Date(Date.now() - 1000);
    const moved = await db
      .collection('timers')
      .updateOne(
        { _id: `privacy-erase:${requestId}` as never, companyId: company },
        { $set: { dueAt: past, nextDueAt: past, leaseOwner: 'worker-killed-9', leaseUntil: past } },
      );
    expect(moved.matchedCount).toBe(1);

    const done = await waitFor(
      async () => {
        const { body } = await b.http.get(`/v1/privacy-requests/${requestId}`).set(acme.auth).expect(200);
        return body.status === 'completed' ? body : null;
      },
      { timeoutMs: 30_000, message: 'the erasure to complete' },
    );
    expect(done).toMatchObject({ id: requestId, type: 'erase', status: 'completed', completedAt: expect.any(String) });
    expect(await db.collection('messages').countDocuments({ companyId: company, text: { $ne: null } })).toBe(0);
    expect(await db.collection('messages').countDocuments({ companyId: company })).toBe(MESSAGES);
    expect(await db.collection('contacts').findOne({ _id: new Types.ObjectId(contactId) })).toMatchObject({ erasedAt: expect.any(Date) });
    // Both processes are live and kept polling: still one completion, one of each event.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const events = await db
      .collection('events')
      .find({ companyId: company, type: { $in: ['contact.erased', 'privacy_request.completed'] } })
      .toArray();
    expect(events.map((event) => event.type).sort()).toEqual(['contact.erased', 'privacy_request.completed']);
    expect(await db.collection('timers').countDocuments({ _id: `privacy-erase:${requestId}` as never })).toBe(0);
  });

  it('cancels a pending erasure (its timer goes), and refuses to cancel it twice', async () => {
    const [a, b] = deployment.apps;
    const contact = await a.http.post('/v1/contacts').set(acme.auth).send({ name: 'Waiting Person', phone: '+14155550198' }).expect(201);
    const accepted = await a.http.post(`/v1/contacts/${contact.body.id}/erase`).set(acme.auth).send({ reason: 'asked by mail' }).expect(202);
    expect(accepted.body).toMatchObject({ status: 'pending', reason: 'asked by mail' });
    expect(Date.parse(accepted.body.dueAt) - Date.now()).toBeGreaterThan(3_500_000);
    const db = a.model('Message').db.db!;
    expect(await db.collection('timers').countDocuments({ _id: `privacy-erase:${accepted.body.id}` as never })).toBe(1);
    const cancelled = await b.http.post(`/v1/privacy-requests/${accepted.body.id}/cancel`).set(acme.auth).send({}).expect(200);
    expect(cancelled.body).toMatchObject({ id: accepted.body.id, status: 'cancelled', completedAt: expect.any(String) });
    await b.http.post(`/v1/privacy-requests/${accepted.body.id}/cancel`).set(acme.auth).send({}).expect(409);
    await b.http.post('/v1/privacy-requests/000000000000000000000000/cancel').set(acme.auth).send({}).expect(404);
    expect(await db.collection('timers').countDocuments({ _id: `privacy-erase:${accepted.body.id}` as never })).toBe(0);
    expect((await a.http.get(`/v1/contacts/${contact.body.id}`).set(acme.auth).expect(200)).body.name).toBe('Waiting Person');
  });
});
