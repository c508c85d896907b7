import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mongo, Types } from 'mongoose';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import type { TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';
import { unzip } from '../support/zip.js';

/** Past the leases a killed process leaves (a timer's 30 s, an export build's 60 s): the survivor's clock jumps them. */
const PAST_LEASES_MS = 61_000;
const ERASED_MESSAGES = 4_000;
const EXPORTED_MESSAGES = 1_000;
const EXPORTED_FILES = 24;
const FILE_BYTES = 512 * 1024;

/**
 * A real API process (spawned, real time) is killed with SIGKILL in the middle of an erasure, then of an export, at a
 * moment the stored state shows half done; a survivor on the same database (in process, on a clock moved past the
 * dead process's leases) finishes each request, once.
 */
describe('privacy: kill -9 during an erasure or an export, finished once by a survivor', () => {
  const clock = new TestClock();
  let deployment: Deployment;
  let db: mongo.Db;
  let client: mongo.MongoClient;
  let survivor: TestApp | undefined;

  beforeAll(async () => {
    deployment = await startDeployment('privacykill', {}, 0, clock);
    client = await mongo.MongoClient.connect(`${deployment.engine.uri}privacykill`);
    db = client.db();
  });
  afterAll(async () => {
    await client.close();
    await deployment.stop();
  });
  // A survivor left running, on its clock past every lease, would take the next test's request from the process
  // about to be killed while that one still builds it.
  afterEach(async () => {
    await survivor?.close();
    survivor = undefined;
  });

  /** A spawned process, a company on it, and a contact with one conversation of `count` messages (the first one sent), `prepare`d. */
  const contactOnSpawned = async (
    count: number,
    prepare: (companyId: Types.ObjectId) => Promise<(index: number) => Record<string, unknown>> = async () => () => ({}),
  ) => {
    const dying = await deployment.spawn();
    const http = request.agent(dying.base) as unknown as TestAgent;
    const acme = await registerCompany(http, 'Acme');
    const key = await createApiKey(http, acme, ['messages:write']);
    const inbound = await http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .send({ from: { phone: `+1415555${String(count).padStart(4, '0').slice(-4)}` }, text: 'wobblequince first' })
      .expect(201);
    const { id: conversationId, contactId } = inbound.body.data.conversation as { id: string; contactId: string };
    const companyId = new Types.ObjectId(acme.companyId);
    const message = await prepare(companyId);
    const now = Date.now();
    await db.collection('messages').insertMany(
      Array.from({ length: count - 1 }, (_, index) => ({
        companyId,
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
        ...message(index),
      })),
    );
    return { dying, http, acme, companyId, contactId, conversationId };
  };

  /** After the kill: the survivor, on a clock past the dead process's leases. */
  const takeOver = async (): Promise<TestApp> => {
    clock.advance(PAST_LEASES_MS);
    survivor = (await deployment.add()).app;
    return survivor;
  };

  const completedEvents = (companyId: Types.ObjectId, type: string) => db.collection('events').countDocuments({ companyId, type });

  it('an erasure killed half way is finished once by the survivor', async () => {
    const { dying, http, acme, companyId, contactId, conversationId } = await contactOnSpawned(ERASED_MESSAGES);
    const accepted = await http.post(`/v1/contacts/${contactId}/erase`).set(acme.auth).send({}).expect(202);
    const requestId = accepted.body.id as string;
    const erased = () => db.collection('messages').countDocuments({ companyId, erasedAt: { $exists: true } });
    const half = await waitFor(
      async () => {
        const count = await erased();
        return count > 0 ? count : null;
      },
      { timeoutMs: 20_000, intervalMs: 10, message: 'the erasure to start' },
    );
    await dying.kill();
    const left = ERASED_MESSAGES - (await erased());
    // The kill landed mid-way: some messages erased, not all, and the request not completed.
    expect({ half: half > 0, left: left > 0 }).toEqual({ half: true, left: true });
    expect((await db.collection('privacy_requests').findOne({ _id: new Types.ObjectId(requestId) }))?.status).toBe('running');

    const app = await takeOver();
    const done = await waitFor(
      async () => {
        const { body } = await app.http.get(`/v1/privacy-requests/${requestId}`).set(acme.auth).expect(200);
        return body.status === 'completed' ? body : null;
      },
      { timeoutMs: 30_000, message: 'the erasure to complete' },
    );
    expect(done).toMatchObject({ id: requestId, type: 'erase', status: 'completed' });
    expect(await db.collection('messages').countDocuments({ companyId, conversationId: new Types.ObjectId(conversationId) })).toBe(ERASED_MESSAGES);
    expect(await db.collection('messages').countDocuments({ companyId, text: { $ne: null } })).toBe(0);
    const contact = await db.collection('contacts').findOne({ _id: new Types.ObjectId(contactId) });
    expect({ erased: contact?.erasedAt instanceof Date, phone: contact?.phone ?? null }).toEqual({ erased: true, phone: null });
    await waitFor(async () => (await completedEvents(companyId, 'contact.erased')) > 0, { message: 'contact.erased logged' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await completedEvents(companyId, 'contact.erased')).toBe(1);
    expect(await completedEvents(companyId, 'privacy_request.completed')).toBe(1);
    expect(await db.collection('timers').countDocuments({ _id: `privacy-erase:${requestId}` as never })).toBe(0);
  }, 120_000);

  it('an export killed while its ZIP is half written is built once, complete, by the survivor', async () => {
    const media = new mongo.GridFSBucket(db, { bucketName: 'media' });
    const originals = new Map<string, Buffer>();
    const { dying, http, acme, companyId, contactId } = await contactOnSpawned(EXPORTED_MESSAGES, async (companyId) => {
      const files: Types.ObjectId[] = [];
      for (let index = 0; index < EXPORTED_FILES; index++) {
        const bytes = randomBytes(FILE_BYTES);
        const upload = media.openUploadStream(`file-${index}.pdf`, { metadata: { companyId, uploadedBy: companyId, mimeType: 'application/pdf' } });
        await new Promise<void>((resolve, reject) => upload.end(bytes, (error?: Error | null) => (error ? reject(error) : resolve())));
        files.push(upload.id as Types.ObjectId);
        originals.set(`media/${String(upload.id)}-file-${index}.pdf`, bytes);
      }
      return (index) =>
        index < EXPORTED_FILES
          ? {
              type: 'document',
              text: null,
              caption: `file ${index}`,
              media: { id: files[index], fileName: `file-${index}.pdf`, mimeType: 'application/pdf', size: FILE_BYTES },
            }
          : {};
    });

    const accepted = await http.post(`/v1/contacts/${contactId}/export`).set(acme.auth).send({ includeNotes: true }).expect(202);
    const requestId = new Types.ObjectId(accepted.body.id as string);
    const stored = async () => (await db.collection('privacy_requests').findOne({ _id: requestId }))!;
    // Each attempt writes its own file, the one the request names while it runs.
    const chunks = (fileId: Types.ObjectId) => db.collection('privacy_exports.chunks').countDocuments({ files_id: fileId });
    const files = () => db.collection('privacy_exports.files').countDocuments({});
    // The ZIP is 12 MiB of random bytes, about 48 GridFS chunks of 255 KiB, each written through this process's engine
    // and waiting for its answer: the first is seen (and the process killed) dozens of chunks before the end. Should
    // the kill ever come late, the checks just below fail rather than pass without a crash mid-way.
    const attempt = await waitFor(
      async () => {
        const { fileId } = await stored();
        return fileId && (await chunks(fileId as Types.ObjectId)) > 0 ? (fileId as Types.ObjectId) : null;
      },
      { timeoutMs: 20_000, intervalMs: 5, message: 'the ZIP to be half written' },
    );
    await dying.kill();
    const partial = await chunks(attempt);
    // The kill landed mid-way: chunks written, the file not finished, the request not completed.
    expect(partial).toBeGreaterThan(0);
    expect(await files()).toBe(0);
    expect((await stored()).status).toBe('running');

    const app = await takeOver();
    // Read from the database, not the API: the build takes seconds on a loaded machine, past the rate limit's polls.
    await waitFor(async () => (await stored()).status === 'completed', {
      timeoutMs: 60_000,
      intervalMs: 100,
      message: 'the export to complete',
    });
    const { body: done } = (await app.http
      .get(`/v1/privacy-requests/${String(requestId)}`)
      .set(acme.auth)
      .expect(200)) as { body: { status: string; downloadUrl: string; completedAt: string } };
    expect(done.status).toBe('completed');
    const zip = await app.http
      .get(done.downloadUrl)
      .buffer(true)
      .parse((res, callback) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('end', () => callback(null, Buffer.concat(parts)));
      })
      .expect(200);
    // Every entry there, each matching its recorded size and CRC-32, the files byte for byte.
    const entries = unzip(zip.body as Buffer);
    expect([...entries.keys()].sort()).toEqual(['contact.json', 'conversations.json', ...originals.keys()].sort());
    const [conversation] = JSON.parse(entries.get('conversations.json')!.toString()) as { messages: unknown[] }[];
    expect(conversation.messages).toHaveLength(EXPORTED_MESSAGES);
    expect([...originals].filter(([name, bytes]) => !entries.get(name)!.equals(bytes))).toEqual([]);
    // One file, another attempt's, its chunks numbered 0..n-1 once each, and no other chunk: nothing of the
    // half-written attempt is left.
    const [file] = await db.collection('privacy_exports.files').find({}).toArray();
    expect({ files: await files(), file: String(file._id) }).toEqual({ files: 1, file: String((await stored()).fileId) });
    expect(file._id).not.toEqual(attempt);
    expect(file.length).toBe((zip.body as Buffer).length);
    const numbers = (await db.collection('privacy_exports.chunks').distinct('n', { files_id: file._id })) as number[];
    const expected = Math.ceil((file.length as number) / (file.chunkSize as number));
    expect({ all: await db.collection('privacy_exports.chunks').countDocuments({}), numbers: numbers.length, max: Math.max(...numbers) }).toEqual({
      all: expected,
      numbers: expected,
      max: expected - 1,
    });
    expect(partial).toBeLessThan(expected);
    // Completed once: one completion event, the request as it was completed, its timer gone.
    await waitFor(async () => (await completedEvents(companyId, 'privacy_request.completed')) > 0, { message: 'the completion logged' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await completedEvents(companyId, 'privacy_request.completed')).toBe(1);
    const request = await stored();
    expect({ status: request.status, completedAt: (request.completedAt as Date).toISOString() }).toEqual({
      status: 'completed',
      completedAt: done.completedAt,
    });
    expect(await db.collection('timers').countDocuments({ _id: `privacy-export:${String(requestId)}` as never })).toBe(0);
  }, 120_000);
});

/** A pending erasure seen and cancelled through two processes. */
describe('privacy: a delayed erasure cancelled (two processes)', () => {
  let deployment: Deployment;
  let acme: TestCompany;

  beforeAll(async () => {
    deployment = await startDeployment('privacycancel', { PRIVACY_ERASE_DELAY_HOURS: '1' });
    acme = await registerCompany(deployment.apps[0].http, 'Acme');
  });
  afterAll(() => deployment.stop());

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
