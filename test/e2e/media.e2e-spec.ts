import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getConnectionToken } from '@nestjs/mongoose';
import { Types, type Connection } from 'mongoose';
import type { Response } from 'supertest';
import { TOO_DEEP } from '../../src/common/body-shape.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import * as samples from '../fixtures/media/samples.js';
import { addAgent, registerCompany, twoCompanies, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectEventually } from '../support/wait-for.js';

interface Part {
  content: Buffer;
  filename: string;
  contentType?: string;
}

/** Reads a response body as raw bytes, whatever its content type. */
function binary(response: Response): Buffer {
  return response.body as Buffer;
}

async function openConversation(t: TestApp, company: TestCompany, status: 'bot' | 'closed' = 'bot'): Promise<string> {
  const conversations = t.model<Conversation & { companyId: Types.ObjectId }>(Conversation.name);
  const conversation = await conversations.create({
    companyId: new Types.ObjectId(company.companyId),
    contactId: new Types.ObjectId(),
    channel: 'whatsapp',
    status,
    isOpen: status !== 'closed',
    closedAt: status === 'closed' ? new Date() : null,
  });
  return conversation._id.toHexString();
}

function mediaCollections(t: TestApp) {
  const db = t.app.get<Connection>(getConnectionToken()).db;
  if (!db) throw new Error('no database');
  return { files: db.collection('media.files'), chunks: db.collection('media.chunks') };
}

async function totalStored(t: TestApp): Promise<{ files: number; chunks: number }> {
  const { files, chunks } = mediaCollections(t);
  return { files: await files.countDocuments({}), chunks: await chunks.countDocuments({}) };
}

describe('media: POST /v1/messages/send-media and GET /v1/media/:id', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let conversationId: string;

  beforeAll(async () => {
    t = await createTestApp();
    ({ acme, globex } = await twoCompanies(t.http));
    conversationId = await openConversation(t, acme);
  });
  afterAll(() => t.close());

  function send(company: { auth: { Authorization: string } }, fields: Record<string, string>, file?: Part) {
    const request = t.http.post('/v1/messages/send-media').set(company.auth);
    for (const [name, value] of Object.entries(fields)) request.field(name, value);
    if (file) request.attach('file', file.content, { filename: file.filename, contentType: file.contentType ?? 'application/octet-stream' });
    return request;
  }

  function download(company: { auth: { Authorization: string } }, url: string) {
    return t.http
      .get(url)
      .set(company.auth)
      .buffer(true)
      .parse((res, callback) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => callback(null, Buffer.concat(chunks)));
      });
  }

  describe('each allowed format round-trips', () => {
    it.each([
      ['image', 'png', 'image/png', 'pixel.png', 'inline'],
      ['image', 'jpeg', 'image/jpeg', 'photo.jpg', 'inline'],
      ['image', 'gif', 'image/gif', 'anim.gif', 'inline'],
      ['image', 'webp', 'image/webp', 'pic.webp', 'inline'],
      ['video', 'mp4', 'video/mp4', 'clip.mp4', 'inline'],
      ['video', 'webm', 'video/webm', 'clip.webm', 'inline'],
      ['video', 'threeGpp', 'video/3gpp', 'clip.3gp', 'inline'],
      ['audio', 'mp3', 'audio/mpeg', 'song.mp3', 'inline'],
      ['audio', 'ogg', 'audio/ogg', 'voice.ogg', 'inline'],
      ['audio', 'wav', 'audio/wav', 'beep.wav', 'inline'],
      ['audio', 'aac', 'audio/aac', 'note.aac', 'inline'],
      ['audio', 'm4a', 'audio/x-m4a', 'memo.m4a', 'inline'],
      ['document', 'pdf', 'application/pdf', 'receipt.pdf', 'attachment'],
    ] as const)('%s: %s', async (type, sample, mimeType, filename, disposition) => {
      const content = samples[sample]();
      const response = await send(acme, { conversationId, type, caption: `a ${sample}` }, { content, filename }).expect(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        conversationId,
        direction: 'outbound',
        type,
        text: null,
        caption: `a ${sample}`,
        media: {
          id: expect.stringMatching(/^[0-9a-f]{24}$/),
          fileName: filename,
          mimeType,
          size: content.length,
          url: `/v1/media/${response.body.media.id}`,
          downloadUrl: expect.stringMatching(/^\/v1\/media\/signed\//),
          downloadUrlExpiresAt: expect.any(String),
        },
        template: null,
        senderType: 'agent',
        senderId: acme.agentId,
        externalId: null,
        delivery: { status: 'pending', updatedAt: response.body.createdAt },
        private: false,
        mentions: [],
        createdAt: expect.any(String),
      });

      const stored = await mediaCollections(t).files.findOne({ _id: new Types.ObjectId(response.body.media.id) });
      expect(stored).toMatchObject({
        filename,
        length: content.length,
        metadata: { companyId: new Types.ObjectId(acme.companyId), uploadedBy: new Types.ObjectId(acme.agentId), mimeType },
      });
      const message = await t.model<Message>(Message.name).findOne({ _id: response.body.id, companyId: acme.companyId }).lean();
      expect(message?.media?.id.toHexString()).toBe(response.body.media.id);

      const file = await download(acme, response.body.media.url).expect(200);
      expect(binary(file).equals(content)).toBe(true);
      expect(file.headers['content-type']).toBe(mimeType);
      expect(file.headers['content-length']).toBe(String(content.length));
      expect(file.headers['content-disposition']).toBe(`${disposition}; filename="${filename}"; filename*=UTF-8''${filename}`);
      expect(file.headers['x-content-type-options']).toBe('nosniff');
    });
  });

  it('takes the type from the content when it is omitted, and stores no empty caption', async () => {
    const response = await send(acme, { conversationId, caption: '' }, { content: samples.pdf(), filename: 'terms' }).expect(201);
    expect(response.body).toMatchObject({ type: 'document', caption: null, media: { fileName: 'terms.pdf', mimeType: 'application/pdf' } });
  });

  it('trusts neither the extension nor the part\'s Content-Type', async () => {
    const png = samples.png();
    const disguised = await send(acme, { conversationId, type: 'image' }, { content: png, filename: 'photo.pdf', contentType: 'application/pdf' }).expect(201);
    expect(disguised.body.media).toMatchObject({ fileName: 'photo.png', mimeType: 'image/png' });
    const file = await download(acme, disguised.body.media.url).expect(200);
    expect(file.headers['content-type']).toBe('image/png');

    const before = await totalStored(t);
    const lying = await send(acme, { conversationId, type: 'image' }, { content: samples.pdf(), filename: 'photo.jpg', contentType: 'image/jpeg' }).expect(400);
    expect(lying.body.errors).toEqual([{ field: 'file', message: expect.stringContaining('application/pdf, which is not an allowed image') }]);
    await expectEventually(() => totalStored(t), before);
  });

  it('400 for a file of another kind than `type`, removing the stored file', async () => {
    const before = await totalStored(t);
    const response = await send(acme, { conversationId, type: 'video' }, { content: samples.mp3(), filename: 'song.mp4', contentType: 'video/mp4' }).expect(400);
    expect(response.body.errors[0]).toMatchObject({ field: 'file', message: expect.stringContaining('audio/mpeg') });
    await expectEventually(() => totalStored(t), before);
    expect(await t.model<Message>(Message.name).countDocuments({ companyId: acme.companyId, 'media.mimeType': 'audio/mpeg', type: 'video' })).toBe(0);
  });

  it.each([
    ['plain text', Buffer.from('just some text\n'), 'notes.txt', 'text/plain'],
    ['CSV', Buffer.from('a,b\n1,2\n'), 'data.csv', 'text/csv'],
    ['HTML', Buffer.from('<!doctype html><script>alert(1)</script>'), 'page.pdf', 'application/pdf'],
    ['SVG', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'logo.png', 'image/png'],
    ['a ZIP archive', Buffer.from('504b0304140000000000000000000000000000000000000000000000000000', 'hex'), 'a.zip', 'application/zip'],
    ['an empty file', Buffer.alloc(0), 'empty.pdf', 'application/pdf'],
  ])('400 for %s, which is not on the allow-list', async (_, content, filename, contentType) => {
    const before = await totalStored(t);
    const response = await send(acme, { conversationId, type: 'document' }, { content, filename, contentType }).expect(400);
    expect(response.body.errors).toEqual([{ field: 'file', message: expect.stringContaining('allowed: image: image/jpeg') }]);
    await expectEventually(() => totalStored(t), before);
  });

  it('round-trips a file of several GridFS chunks (> 255 KiB)', async () => {
    const content = samples.png(800, 800, true);
    expect(content.length).toBeGreaterThan(600 * 1024);
    const response = await send(acme, { conversationId, type: 'image' }, { content, filename: 'big.png' }).expect(201);
    expect(response.body.media.size).toBe(content.length);
    const id = new Types.ObjectId(response.body.media.id);
    expect(await mediaCollections(t).chunks.countDocuments({ files_id: id })).toBe(Math.ceil(content.length / (255 * 1024)));
    const file = await download(acme, response.body.media.url).expect(200);
    expect(binary(file).equals(content)).toBe(true);
  });

  it('keeps a UTF-8 file name, encoded in Content-Disposition', async () => {
    const response = await send(acme, { conversationId }, { content: samples.pdf(), filename: 'résumé "final".pdf' }).expect(201);
    expect(response.body.media.fileName).toBe('résumé "final".pdf');
    const file = await download(acme, response.body.media.url).expect(200);
    expect(file.headers['content-disposition']).toBe(
      `attachment; filename="r_sum_ _final_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22final%22.pdf`,
    );
  });

  describe('refused requests store nothing', () => {
    it('400 without a file part', async () => {
      const response = await send(acme, { conversationId, type: 'image' }).expect(400);
      expect(response.body.errors).toEqual([{ field: 'file', message: 'file is required' }]);
      const json = await t.http.post('/v1/messages/send-media').set(acme.auth).send({ conversationId }).expect(400);
      expect(json.body.errors).toEqual([{ field: 'file', message: 'file is required' }]);
    });

    it.each([
      ['no conversationId', () => ({}), 'conversationId'],
      ['a malformed conversationId', () => ({ conversationId: 'abc' }), 'conversationId'],
      ['an unknown type', () => ({ conversationId, type: 'sticker' }), 'type'],
      ['a caption over 1024 characters', () => ({ conversationId, caption: 'x'.repeat(1025) }), 'caption'],
      ['an unknown field', () => ({ conversationId, text: 'hi' }), 'text'],
    ])('400 for %s, removing the uploaded file', async (_, fields: () => Record<string, string>, field) => {
      const before = await totalStored(t);
      const response = await send(acme, fields(), { content: samples.png(), filename: 'a.png' }).expect(400);
      expect(response.body.errors.map((problem: { field: string }) => problem.field)).toContain(field);
      await expectEventually(() => totalStored(t), before);
    });

    it('400 for a form field whose name nests deeper than 20 levels, before validation, removing the file', async () => {
      const before = await totalStored(t);
      const response = await send(acme, { conversationId, [`x${'[a]'.repeat(25)}`]: '1' }, { content: samples.png(), filename: 'a.png' }).expect(400);
      expect(response.body.message).toBe(TOO_DEEP);
      await expectEventually(() => totalStored(t), before);
    });

    it('400 for another company\'s conversation, a missing one and a closed one, removing the file', async () => {
      const before = await totalStored(t);
      const foreign = await openConversation(t, globex);
      const closed = await openConversation(t, acme, 'closed');
      for (const id of [foreign, new Types.ObjectId().toHexString(), closed]) {
        const response = await send(acme, { conversationId: id, type: 'image' }, { content: samples.png(), filename: 'a.png' }).expect(400);
        expect(response.body.status).toBe(400);
        expect(JSON.stringify(response.body)).not.toContain(globex.companyId);
      }
      await expectEventually(() => totalStored(t), before);
      expect(await t.model<Message>(Message.name).countDocuments({ companyId: globex.companyId })).toBe(0);
    });

    it('400 for two files, or a file under another field name', async () => {
      const before = await totalStored(t);
      await t.http
        .post('/v1/messages/send-media')
        .set(acme.auth)
        .field('conversationId', conversationId)
        .attach('file', samples.png(), 'a.png')
        .attach('file', samples.gif(), 'b.gif')
        .expect(400);
      await t.http
        .post('/v1/messages/send-media')
        .set(acme.auth)
        .field('conversationId', conversationId)
        .attach('attachment', samples.png(), 'a.png')
        .expect(400);
      await expectEventually(() => totalStored(t), before);
    });

    it('401 without a token, before reading the file', async () => {
      const before = await totalStored(t);
      await t.http.post('/v1/messages/send-media').field('conversationId', conversationId).attach('file', samples.png(), 'a.png').expect(401);
      expect(await totalStored(t)).toEqual(before);
    });
  });

  describe('download', () => {
    let url: string;

    beforeAll(async () => {
      const response = await send(acme, { conversationId }, { content: samples.jpeg(), filename: 'secret.jpg' }).expect(201);
      url = response.body.media.url;
    });

    it('serves the owning company\'s agents of any role', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const file = await download(agent, url).expect(200);
      expect(binary(file).equals(samples.jpeg())).toBe(true);
    });

    it('404 for another company, a missing id and a malformed id; 401 without a token', async () => {
      const foreign = await t.http.get(url).set(globex.auth).expect(404);
      expect(foreign.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(foreign.body).toMatchObject({ status: 404 });
      expect(foreign.headers['content-disposition']).toBeUndefined();
      await t.http.get(`/v1/media/${new Types.ObjectId().toHexString()}`).set(acme.auth).expect(404);
      await t.http.get('/v1/media/not-an-id').set(acme.auth).expect(404);
      await t.http.get(url).expect(401);
    });
  });

  it('documents both routes in OpenAPI', async () => {
    const document = (await t.http.get('/docs-json').expect(200)).body;
    const upload = document.paths['/v1/messages/send-media'].post;
    const form = upload.requestBody.content['multipart/form-data'].schema;
    expect(form.required).toEqual(['conversationId', 'file']);
    expect(form.properties.file).toMatchObject({ type: 'string', format: 'binary' });
    expect(Object.keys(upload.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '413', '429']));
    const get = document.paths['/v1/media/{id}'].get;
    expect(get.responses['200'].content['application/pdf'].schema).toEqual({ type: 'string', format: 'binary' });
    expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['200', '401', '404']));
  });

  describe('size limit (MEDIA_MAX_BYTES of a little more than one GridFS chunk)', () => {
    const limit = 300_000;

    let small: TestApp;
    let initech: TestCompany;
    let smallConversation: string;

    beforeAll(async () => {
      small = await createTestApp({ env: { MEDIA_MAX_BYTES: String(limit) } });
      initech = await registerCompany(small.http, 'Initech');
      smallConversation = await openConversation(small, initech);
    });
    afterAll(() => small.close());

    function sendSmall(content: Buffer) {
      return small.http
        .post('/v1/messages/send-media')
        .set(initech.auth)
        .field('conversationId', smallConversation)
        .attach('file', content, 'big.png');
    }

    it('accepts a file of exactly the limit', async () => {
      const content = Buffer.concat([samples.pdf(), Buffer.alloc(limit - samples.pdf().length, 0x20)]);
      const response = await sendSmall(content).expect(201);
      expect(response.body.media.size).toBe(limit);
      const file = await small.http.get(response.body.media.url).set(initech.auth).expect(200);
      expect(file.headers['content-length']).toBe(String(limit));
    });

    it.each([
      ['one byte over', limit + 1],
      ['several chunks over', 4 * limit],
    ])('413 for a file %s, leaving nothing in GridFS', async (_, size) => {
      const before = await totalStored(small);
      const content = Buffer.concat([samples.png(64, 64, true), Buffer.alloc(size)]).subarray(0, size);
      const response = await sendSmall(content).expect(413);
      expect(response.body).toMatchObject({ status: 413, title: 'Payload Too Large' });
      await expectEventually(() => totalStored(small), before);
    });
  });
});
