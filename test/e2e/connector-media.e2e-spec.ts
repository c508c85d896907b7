import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import { Contact } from '../../src/contacts/contact.schema.js';
import { MediaStorage } from '../../src/media/media-storage.js';
import { DurableTimers } from '../../src/lanes/durable-timers.js';
import { MediaUploadExpiry, UPLOAD_EXPIRY_TIMER } from '../../src/media/media-upload-expiry.js';
import { Message } from '../../src/messages/message.schema.js';
import * as samples from '../fixtures/media/samples.js';
import { EventRecorder } from '../support/event-log.js';
import { createApiKey, twoCompanies, type TestCompany } from '../support/factories.js';
import { expectReplayOf, uniqueKey } from '../support/idempotency.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { expectEventually, waitFor } from '../support/wait-for.js';

const HOUR = 3_600_000;
/** A little more than one GridFS chunk (255 KiB). */
const MAX_BYTES = 300_000;

let sequence = 0;
/** A phone no other test uses: each message opens a conversation and a contact of its own. */
function newPhone(): string {
  sequence += 1;
  return `+1415777${String(sequence).padStart(4, '0')}`;
}

/** Reads a response body as raw bytes, whatever its content type. */
function bytesOf(request: ReturnType<TestApp['http']['get']>) {
  return request.buffer(true).parse((res, callback) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => callback(null, Buffer.concat(chunks)));
  });
}

/** Contract section 13: media both ways for a channel connector holding an API key. */
describe('connector media: POST /api/external/media, media messages, GET /api/external/media/:id', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let writer: string;
  let reader: string;
  let globexWriter: string;
  let recorder: EventRecorder;

  const clock = new TestClock();

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000', MEDIA_MAX_BYTES: String(MAX_BYTES), MEDIA_UPLOAD_TTL_HOURS: '2' } });
    ({ acme, globex } = await twoCompanies(t.http));
    writer = await createApiKey(t.http, acme, ['messages:write']);
    reader = await createApiKey(t.http, acme, ['media:read']);
    globexWriter = await createApiKey(t.http, globex, ['messages:write', 'media:read']);
    recorder = new EventRecorder(t);
  });
  afterAll(() => t.close());

  const db = () => t.app.get<Connection>(getConnectionToken()).db!;
  const files = () => db().collection('media.files');
  const chunks = () => db().collection('media.chunks');
  const storedFile = (id: string) => files().findOne({ _id: new Types.ObjectId(id) });
  const counts = async () => ({
    files: await files().countDocuments({}),
    chunks: await chunks().countDocuments({}),
    messages: await t.model<Message>(Message.name).countDocuments({ companyId: { $in: [acme.companyId, globex.companyId] } }),
    contacts: await t.model<Contact>(Contact.name).countDocuments({ companyId: { $in: [acme.companyId, globex.companyId] } }),
  });

  function upload(key: string, content: Buffer, fields: Record<string, string> = {}, filename = 'photo.png') {
    const request = t.http.post('/api/external/media').set('x-api-key', key);
    for (const [name, value] of Object.entries(fields)) request.field(name, value);
    return request.attach('file', content, { filename, contentType: 'application/octet-stream' });
  }
  const receive = (body: object, key = writer) => t.http.post('/api/external/messages').set('x-api-key', key).send(body);
  const download = (key: string, id: string) => bytesOf(t.http.get(`/api/external/media/${id}`).set('x-api-key', key));
  const uploadedId = async (content: Buffer = samples.png(), key = writer): Promise<string> => (await upload(key, content).expect(201)).body.data.id;

  describe('POST /api/external/media', () => {
    it('stores the file sniffed and named by its content, waiting MEDIA_UPLOAD_TTL_HOURS for its message', async () => {
      const content = samples.jpeg();
      const before = Date.now();
      const response = await upload(writer, content, { type: 'image' }, 'IMG_0042.png').expect(201);
      expect(response.body).toEqual({
        success: true,
        data: {
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          type: 'image',
          mimeType: 'image/jpeg',
          size: content.length,
          fileName: 'IMG_0042.jpg',
          expiresAt: expect.any(String),
        },
      });
      const expiresAt = Date.parse(response.body.data.expiresAt);
      expect(expiresAt).toBeGreaterThanOrEqual(before + 2 * HOUR);
      expect(expiresAt).toBeLessThanOrEqual(Date.now() + 2 * HOUR);
      const stored = await storedFile(response.body.data.id);
      expect(stored).toMatchObject({
        filename: 'IMG_0042.jpg',
        length: content.length,
        metadata: { companyId: new Types.ObjectId(acme.companyId), mimeType: 'image/jpeg', expiresAt: new Date(expiresAt) },
      });
    });

    it('takes the type from the content when it is omitted', async () => {
      const response = await upload(writer, samples.ogg(), {}, 'voice').expect(201);
      expect(response.body.data).toMatchObject({ type: 'audio', mimeType: 'audio/ogg', fileName: 'voice.ogg' });
    });

    it.each([
      ['a type the content is not', samples.png(), { type: 'video' }, 400, /^file content is image\/png, which is not an allowed video \(video: /],
      ['content off the allow-list', Buffer.from('<html><script>alert(1)</script></html>'), {}, 400, /^file content is not a recognised format; allowed: /],
      ['an unknown type', samples.png(), { type: 'sticker' }, 400, /^type must be one of the following values/],
      ['an unknown field', samples.png(), { conversationId: '6650f0c2a1b2c3d4e5f60718' }, 400, /conversationId is not a field of this body/],
      ['a file over MEDIA_MAX_BYTES', samples.png(600, 600, true), {}, 413, /too large|larger than the limit/i],
    ])('refuses %s in the envelope, storing nothing', async (_case, content, fields, status, error) => {
      const before = await counts();
      const response = await upload(writer, content, fields as Record<string, string>).expect(status);
      expect(response.body).toEqual({ success: false, error: expect.stringMatching(error) });
      await expectEventually(counts, before);
    });

    it('refuses a request without a file (400) and a key without messages:write (403)', async () => {
      const missing = await t.http.post('/api/external/media').set('x-api-key', writer).field('type', 'image').expect(400);
      expect(missing.body).toEqual({ success: false, error: 'file is required' });
      const before = await counts();
      const forbidden = await upload(reader, samples.png()).expect(403);
      expect(forbidden.body).toEqual({ success: false, error: expect.stringContaining('messages:write') });
      const unauthenticated = await t.http.post('/api/external/media').attach('file', samples.png(), 'a.png').expect(401);
      expect(unauthenticated.body.success).toBe(false);
      await expectEventually(counts, before);
    });
  });

  describe('media messages on POST /api/external/messages', () => {
    it('stores an inbound media message with its caption, text optional, and carries it in message.received', async () => {
      const id = await uploadedId(samples.pdf());
      await recorder.clear();
      const response = await receive({ from: { phone: newPhone() }, type: 'document', mediaId: id, caption: 'My invoice', channel: 'whatsapp' }).expect(201);
      const { message } = response.body.data;
      expect(message).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        conversationId: response.body.data.conversation.id,
        direction: 'inbound',
        type: 'document',
        text: null,
        caption: 'My invoice',
        media: { id, fileName: 'photo.pdf', mimeType: 'application/pdf', size: samples.pdf().length, url: `/v1/media/${id}` },
        template: null,
        senderType: 'contact',
        senderId: expect.any(String),
        externalId: null,
        delivery: null,
        private: false,
        mentions: [],
        createdAt: expect.any(String),
      });
      const events = await recorder.events();
      expect(events.map((event) => event.type)).toEqual(['contact.created', 'conversation.created', 'message.received']);
      expect((events[2].data as { message: unknown }).message).toEqual(message);
      const stored = await t.model<Message>(Message.name).findOne({ _id: message.id, companyId: acme.companyId }).lean();
      expect(stored).toMatchObject({ type: 'document', caption: 'My invoice', text: null, media: { id: new Types.ObjectId(id) } });
      // The agent reads it with a bearer token, the connector with media:read.
      const download = await bytesOf(t.http.get(message.media.url).set(acme.auth)).expect(200);
      expect((download.body as Buffer).equals(samples.pdf())).toBe(true);
    });

    it('takes the type from the upload when omitted, and keeps a text beside the file', async () => {
      const id = await uploadedId(samples.mp3());
      const response = await receive({ from: { phone: newPhone() }, mediaId: id, text: 'Listen to this' }).expect(201);
      expect(response.body.data.message).toMatchObject({ type: 'audio', text: 'Listen to this', caption: null, media: { id, mimeType: 'audio/mpeg' } });
    });

    it.each([
      ['neither text nor mediaId', () => ({}), 'text must be'],
      ['a type without mediaId', () => ({ text: 'hi', type: 'image' }), 'type is only for a message with a file: send mediaId too'],
      ['a caption without mediaId', () => ({ text: 'hi', caption: 'x' }), 'caption is only for a message with a file'],
      ['a malformed mediaId', () => ({ mediaId: 'nope' }), 'mediaId must be the id of an upload'],
      ['an unknown type', () => ({ mediaId: new Types.ObjectId().toHexString(), type: 'sticker' }), 'type must be one of the following values'],
      ['an empty text with a file', () => ({ mediaId: new Types.ObjectId().toHexString(), text: '' }), 'text must not be empty'],
    ])('refuses %s (400), storing nothing', async (_case, body, error) => {
      const before = await counts();
      const response = await receive({ from: { phone: newPhone() }, ...body() }).expect(400);
      expect(response.body).toEqual({ success: false, error: expect.stringContaining(error) });
      expect(await counts()).toEqual(before);
    });

    it('refuses a type that is not the upload’s (400), storing nothing, and the upload stays usable', async () => {
      const id = await uploadedId(samples.png());
      const before = await counts();
      const phone = newPhone();
      const response = await receive({ from: { phone }, type: 'video', mediaId: id }).expect(400);
      expect(response.body).toEqual({ success: false, error: `type is video, but media ${id} is image/png, a image: send type image` });
      expect(await counts()).toEqual(before);
      await receive({ from: { phone }, type: 'image', mediaId: id }).expect(201);
    });

    it('refuses another company’s upload and an id that is no upload as not an upload of yours (400), storing nothing', async () => {
      const theirs = await uploadedId(samples.png(), globexWriter);
      for (const mediaId of [theirs, new Types.ObjectId().toHexString()]) {
        const before = await counts();
        const response = await receive({ from: { phone: newPhone() }, mediaId }).expect(400);
        expect(response.body.error).toBe(`mediaId ${mediaId} is not an upload of your company: upload the file with POST /api/external/media first`);
        expect(await counts()).toEqual(before);
      }
      // Globex's own message with it works: the refusal above changed nothing.
      await receive({ from: { phone: newPhone() }, mediaId: theirs }, globexWriter).expect(201);
    });

    it('refuses an upload a message already carries (400), and an agent’s attachment, storing nothing', async () => {
      const id = await uploadedId();
      await receive({ from: { phone: newPhone() }, mediaId: id }).expect(201);
      const before = await counts();
      const again = await receive({ from: { phone: newPhone() }, mediaId: id }).expect(400);
      expect(again.body.error).toBe(`media ${id} is already used by a message: upload the file again for another message`);
      expect(await counts()).toEqual(before);

      const conversation = (await receive({ from: { phone: newPhone() }, text: 'hello' }).expect(201)).body.data.conversation.id;
      const sent = await t.http
        .post('/v1/messages/send-media')
        .set(acme.auth)
        .field('conversationId', conversation)
        .attach('file', samples.gif(), 'wave.gif')
        .expect(201);
      const agentFile = await receive({ from: { phone: newPhone() }, mediaId: sent.body.media.id }).expect(400);
      expect(agentFile.body.error).toContain('is already used by a message');
    });

    it('lets exactly one of two messages sent at once with one upload through', async () => {
      for (let round = 0; round < 3; round += 1) {
        const id = await uploadedId();
        const answers = await Promise.all([receive({ from: { phone: newPhone() }, mediaId: id }), receive({ from: { phone: newPhone() }, mediaId: id })]);
        expect(answers.map((answer) => answer.status).sort()).toEqual([201, 400]);
        expect(answers.find((answer) => answer.status === 400)!.body.error).toContain('is already used by a message');
        expect(await t.model<Message>(Message.name).countDocuments({ companyId: acme.companyId, 'media.id': new Types.ObjectId(id) })).toBe(1);
      }
    });

    it('stores a retried media message once by externalId, the repeats answering 200 duplicate (at once too)', async () => {
      const id = await uploadedId();
      const body = { from: { phone: newPhone() }, mediaId: id, type: 'image', caption: 'receipt', channel: 'whatsapp', externalId: `wamid.media-${Date.now()}` };
      const first = await receive(body).expect(201);
      const repeat = await receive(body).expect(200);
      expect(repeat.body).toEqual({ success: true, data: { ...first.body.data, duplicate: true } });

      const other = await uploadedId();
      const concurrent = { ...body, mediaId: other, from: { phone: newPhone() }, externalId: `wamid.media-at-once-${Date.now()}` };
      const answers = await Promise.all([receive(concurrent), receive(concurrent), receive(concurrent)]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 201]);
      expect(new Set(answers.map((answer) => answer.body.data.message.id)).size).toBe(1);
      expect(await t.model<Message>(Message.name).countDocuments({ companyId: acme.companyId, externalId: concurrent.externalId })).toBe(1);
    });

    it('replays a media message sent again with its Idempotency-Key, storing it once', async () => {
      const id = await uploadedId();
      const key = uniqueKey();
      const body = { from: { phone: newPhone() }, mediaId: id };
      const send = () => t.http.post('/api/external/messages').set('x-api-key', writer).set('Idempotency-Key', key).send(body);
      const first = await send().expect(201);
      const second = await send();
      expectReplayOf(second, first);
      expect(await t.model<Message>(Message.name).countDocuments({ companyId: acme.companyId, 'media.id': new Types.ObjectId(id) })).toBe(1);
    });
  });

  describe('GET /api/external/media/:id (media:read)', () => {
    it('streams an agent’s attachment with its content type, and an upload', async () => {
      const conversation = (await receive({ from: { phone: newPhone() }, text: 'send me the form' }).expect(201)).body.data.conversation.id;
      const content = samples.pdf('The form');
      const sent = await t.http.post('/v1/messages/send-media').set(acme.auth).field('conversationId', conversation).attach('file', content, 'form.pdf').expect(201);
      const file = await download(reader, sent.body.media.id).expect(200);
      expect((file.body as Buffer).equals(content)).toBe(true);
      expect(file.headers).toMatchObject({
        'content-type': 'application/pdf',
        'content-length': String(content.length),
        'content-disposition': `attachment; filename="form.pdf"; filename*=UTF-8''form.pdf`,
        'x-content-type-options': 'nosniff',
      });
      const uploaded = await uploadedId(samples.webp());
      expect((await download(reader, uploaded).expect(200)).headers['content-type']).toBe('image/webp');
    });

    it('answers 404 in the envelope for another company’s file, a missing and a malformed id; 403 without media:read', async () => {
      const theirs = await uploadedId(samples.png(), globexWriter);
      for (const id of [theirs, new Types.ObjectId().toHexString(), 'not-an-id']) {
        const response = await t.http.get(`/api/external/media/${id}`).set('x-api-key', reader).expect(404);
        expect(response.body).toEqual({ success: false, error: `Media ${id} not found` });
      }
      const mine = await uploadedId();
      const forbidden = await t.http.get(`/api/external/media/${mine}`).set('x-api-key', writer).expect(403);
      expect(forbidden.body).toEqual({ success: false, error: expect.stringContaining('media:read') });
      await download(globexWriter, theirs).expect(200);
    });
  });

  describe('indexes', () => {
    interface PlanStage {
      stage: string;
      indexName?: string;
      inputStage?: PlanStage;
    }
    const indexOf = (explained: unknown): string | undefined => {
      let stage: PlanStage | undefined = (explained as { queryPlanner: { winningPlan: PlanStage } }).queryPlanner.winningPlan;
      while (stage && stage.stage !== 'IXSCAN') stage = stage.inputStage;
      return stage?.indexName;
    };

    it('serve the lookup of a file’s message', async () => {
      const id = new Types.ObjectId(await uploadedId());
      const byMedia = await t
        .model<Message>(Message.name)
        .find({ companyId: acme.companyId, 'media.id': { $in: [id], $type: 'objectId' } })
        .explain('queryPlanner');
      expect(indexOf(byMedia)).toBe('one_message_per_media');
    });
  });

  describe('uploads no message refers to', () => {
    const expire = (at: number, ...ids: string[]) =>
      Promise.all(ids.map((id) => t.app.get(MediaUploadExpiry).expire(acme.companyId, new Types.ObjectId(id), new Date(at))));

    it('are removed, files and chunks, once MEDIA_UPLOAD_TTL_HOURS have passed; those a message carries stay', async () => {
      const orphan = await uploadedId(Buffer.concat([samples.png(), Buffer.alloc(MAX_BYTES - 1000)])); // more than one GridFS chunk
      const carried = await uploadedId(samples.gif());
      await receive({ from: { phone: newPhone() }, mediaId: carried }).expect(201);
      const orphanId = new Types.ObjectId(orphan);
      expect(await chunks().countDocuments({ files_id: orphanId })).toBeGreaterThan(1);

      await expire(Date.now() + HOUR, orphan, carried);
      expect(await storedFile(orphan)).not.toBeNull();

      await expire(Date.now() + 2 * HOUR + 60_000, orphan, carried);
      expect(await storedFile(orphan)).toBeNull();
      expect(await chunks().countDocuments({ files_id: orphanId })).toBe(0);
      const kept = await storedFile(carried);
      expect(kept).not.toBeNull();
      expect(kept?.metadata).not.toHaveProperty('expiresAt');
      await download(reader, carried).expect(200);
      // Kept for good: a later firing leaves it, and it stays used.
      await expire(Date.now() + 100 * HOUR, carried);
      expect(await storedFile(carried)).not.toBeNull();
      await receive({ from: { phone: newPhone() }, mediaId: orphan }).expect(400);
    });

    it('are not removed while a message about to carry one holds it, and an expired one is not carried', async () => {
      const id = await uploadedId();
      const expiresAt = (await storedFile(id))!.metadata.expiresAt as Date;
      // A message checked the upload just before it expired: the hold keeps it past the expiry.
      const held = await t.app
        .get(MediaStorage)
        .hold(acme.companyId, new Types.ObjectId(id), new Date(expiresAt.getTime() - 1000), new Date(expiresAt.getTime() + 60_000));
      expect(held).toBe(true);
      await expire(expiresAt.getTime() + 1000, id);
      expect(await storedFile(id)).not.toBeNull();
      // Its timer was moved to the held expiry, not dropped.
      expect(await t.app.get(DurableTimers).dueAt(acme.companyId, UPLOAD_EXPIRY_TIMER, id)).toEqual(new Date(expiresAt.getTime() + 60_000));
      // Once the held expiry has passed, a hold finds it expired and carries it no further.
      const late = await t.app
        .get(MediaStorage)
        .hold(acme.companyId, new Types.ObjectId(id), new Date(expiresAt.getTime() + 61_000), new Date(expiresAt.getTime() + 120_000));
      expect(late).toBe(false);
      expect((await storedFile(id))!.metadata.expiresAt).toEqual(new Date(expiresAt.getTime() + 60_000));
      await expire(expiresAt.getTime() + 61_000, id);
      expect(await storedFile(id)).toBeNull();
    });

    it('each has a durable timer at its expiry, which removes it when it falls due', async () => {
      const id = await uploadedId();
      const expiresAt = (await storedFile(id))!.metadata.expiresAt as Date;
      expect(await t.app.get(DurableTimers).dueAt(acme.companyId, UPLOAD_EXPIRY_TIMER, id)).toEqual(expiresAt);
      clock.advance(2 * HOUR + 1000);
      await waitFor(async () => (await storedFile(id)) === null, { message: `upload ${id} to be removed by its timer` });
      expect(await chunks().countDocuments({ files_id: new Types.ObjectId(id) })).toBe(0);
      expect(await t.app.get(DurableTimers).dueAt(acme.companyId, UPLOAD_EXPIRY_TIMER, id)).toBeNull();
    });
  });
});
