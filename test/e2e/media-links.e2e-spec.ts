import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Response } from 'supertest';
import { MediaStorage } from '../../src/media/media-storage.js';
import { Types } from 'mongoose';
import * as samples from '../fixtures/media/samples.js';
import { EventRecorder } from '../support/event-log.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';

const TTL = 600;

const binary = (response: Response) => response.body as Buffer;

describe('signed media links: downloadUrl in REST answers', () => {
  let t: TestApp;
  let acme: TestCompany;
  let conversationId: string;
  const clock = new TestClock();
  const image = samples.png(2, 2);

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000', MEDIA_URL_TTL_SECONDS: String(TTL) } });
    acme = await registerCompany(t.http, 'Acme');
    const apiKey = await createApiKey(t.http, acme, ['messages:write']);
    const { body } = await t.http.post('/api/external/messages').set('x-api-key', apiKey).send({ from: { phone: '+14155551001' }, text: 'photo?' }).expect(201);
    conversationId = body.data.conversation.id;
  });
  afterAll(() => t.close());

  const send = async () =>
    (await t.http.post('/v1/messages/send-media').set(acme.auth).field('conversationId', conversationId).field('type', 'image').attach('file', image, 'photo.png').expect(201)).body;
  const fetchLink = (url: string) => t.http.get(url).buffer(true).parse((res, done) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => done(null, Buffer.concat(chunks)));
  });

  it('serves the file without credentials until it expires, at least MEDIA_URL_TTL_SECONDS after the answer', async () => {
    const before = clock.now().getTime();
    const sent = await send();
    const { downloadUrl, downloadUrlExpiresAt, url } = sent.media;
    expect(url).toBe(`/v1/media/${sent.media.id}`);
    const expiresAt = new Date(downloadUrlExpiresAt).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + TTL * 1000);
    expect(expiresAt).toBeLessThanOrEqual(before + TTL * 1100 + 1000);

    const response = await fetchLink(downloadUrl).expect(200);
    expect(binary(response).equals(image)).toBe(true);
    expect(response.headers).toMatchObject({ 'content-type': 'image/png', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' });
    expect(response.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
    expect(Number(response.headers['cache-control'].split('=')[1])).toBeLessThanOrEqual(Math.ceil((expiresAt - before) / 1000));

    // The messages page signs its media too; within a step the link is the same (browsers keep it cached).
    const page = await t.http.get(`/v1/conversations/${conversationId}/messages`).set(acme.auth).expect(200);
    const listed = page.body.data.find((message: { id: string }) => message.id === sent.id);
    expect(listed.media).toMatchObject({ downloadUrl: expect.stringMatching(/^\/v1\/media\/signed\//), downloadUrlExpiresAt: expect.any(String) });
    await fetchLink(listed.media.downloadUrl).expect(200);

    clock.advance((expiresAt - clock.now().getTime()) - 1000);
    await fetchLink(downloadUrl).expect(200);
    clock.advance(1000);
    const expired = await t.http.get(downloadUrl).expect(410);
    expect(expired.headers['content-type']).toContain('application/problem+json');
    expect(expired.body).toMatchObject({ status: 410, detail: expect.stringContaining('expired') });

    // A fresh read gives a fresh link.
    const again = await t.http.get(`/v1/conversations/${conversationId}/messages`).set(acme.auth).expect(200);
    await fetchLink(again.body.data.find((message: { id: string }) => message.id === sent.id).media.downloadUrl).expect(200);
  });

  it('refuses a link with any character changed (403), even one that only extends it', async () => {
    const { media } = await send();
    const url: string = media.downloadUrl;
    const token = url.split('/').pop()!;
    const [payload, signature] = token.split('.');
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const tampered = [
      `/v1/media/signed/${flip(payload, 3)}.${signature}`,
      `/v1/media/signed/${payload}.${flip(signature, 5)}`,
      // A later expiry with the old signature.
      `/v1/media/signed/${flip(payload, payload.length - 2)}.${signature}`,
      // The unused bits of the last characters: decoded alike, still not the link that was issued.
      `/v1/media/signed/${flip(payload, payload.length - 1)}.${signature}`,
      `/v1/media/signed/${payload}.${flip(signature, signature.length - 1)}`,
      `/v1/media/signed/${payload}`,
      `/v1/media/signed/${token}.x`,
      '/v1/media/signed/nope',
    ];
    for (const link of tampered) {
      const response = await t.http.get(link);
      expect({ link, status: response.status }).toEqual({ link, status: 403 });
      expect(response.headers['content-type']).toContain('application/problem+json');
    }
    await fetchLink(url).expect(200);
  });

  it('a file removed since answers 404; events never carry a link', async () => {
    const recorder = new EventRecorder(t);
    await recorder.clear();
    const { media } = await send();
    const [event] = await recorder.events();
    expect((event.data as unknown as { message: { media: Record<string, unknown> } }).message.media).not.toHaveProperty('downloadUrl');
    await t.app.get(MediaStorage).delete(acme.companyId, new Types.ObjectId(media.id as string));
    await t.http.get(media.downloadUrl).expect(404);
  });
});
