import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getConnectionToken } from '@nestjs/mongoose';
import type { Connection } from 'mongoose';
import * as samples from '../fixtures/media/samples.js';
import { expectReplayOf, IdempotencyClient, uniqueKey } from '../support/idempotency.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('Idempotency-Key on a media upload (multipart, streamed into GridFS)', () => {
  let t: TestApp;
  let acme: IdempotencyClient;
  let conversationId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    acme = await IdempotencyClient.register(t, 'Acme');
    conversationId = await acme.openConversation();
  });
  afterAll(() => t.close());

  /** Each call builds a new multipart body, with a boundary of its own, as a retrying client does. */
  const upload = (key: string, fields: Record<string, string>, content: Buffer, filename = 'pixel.png') => {
    const request = t.http.post('/v1/messages/send-media').set(acme.company.auth).set('Idempotency-Key', key);
    for (const [name, value] of Object.entries({ conversationId, ...fields })) request.field(name, value);
    return request.attach('file', content, { filename, contentType: 'image/png' });
  };

  const storedFiles = () => t.app.get<Connection>(getConnectionToken()).db!.collection('media.files').countDocuments({});

  it('replays an upload sent again, with a new multipart boundary, without storing the file twice', async () => {
    const key = uniqueKey();
    const content = samples.png(600, 600, true); // over one GridFS chunk
    const filesBefore = await storedFiles();
    const first = await upload(key, { caption: 'receipt' }, content).expect(201);
    const second = await upload(key, { caption: 'receipt' }, content);
    expectReplayOf(second, first);
    expect(await storedFiles()).toBe(filesBefore + 1);
    const images = (await acme.messagesIn(conversationId)).filter((message) => message.type === 'image');
    expect(images.map((message) => message._id.toHexString())).toEqual([first.body.id]);
  });

  it('answers 422 for another file, file name or caption under the same key, storing nothing', async () => {
    const key = uniqueKey();
    await upload(key, { caption: 'receipt' }, samples.png(2, 2)).expect(201);
    const filesBefore = await storedFiles();
    await upload(key, { caption: 'receipt' }, samples.png(3, 3)).expect(422);
    await upload(key, { caption: 'receipt' }, samples.png(2, 2), 'other.png').expect(422);
    const response = await upload(key, { caption: 'another caption' }, samples.png(2, 2)).expect(422);
    expect(response.body.detail).toBe('This Idempotency-Key was used with a different request body; use a new key');
    expect(await storedFiles()).toBe(filesBefore);
  });

  it('answers 409, without reading or storing the file, while another process runs the key', async () => {
    const key = uniqueKey();
    await acme.claimedElsewhere(key, '/v1/messages/send-media');
    const filesBefore = await storedFiles();
    await upload(key, { caption: 'busy' }, samples.png(600, 600, true)).expect(409);
    expect(await storedFiles()).toBe(filesBefore);
  });

  it('keeps a refused upload (400) and replays it', async () => {
    const key = uniqueKey();
    const first = await upload(key, { type: 'video' }, samples.png(), 'not-a-video.png').expect(400);
    const second = await upload(key, { type: 'video' }, samples.png(), 'not-a-video.png');
    expectReplayOf(second, first);
    expect(await acme.recordOf(key)).toMatchObject({ state: 'done', status: 400 });
  });
});
