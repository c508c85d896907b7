import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Channel } from '../../src/channels/channel.schema.js';
import { ChannelsService } from '../../src/channels/channels.service.js';
import { addAgent, twoCompanies, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Channels as records (contract section 17): /v1/channels. */
describe('/v1/channels', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  let supervisor: TestAgentLogin;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    [agent, supervisor] = await Promise.all([addAgent(t, acme, 'agent'), addAgent(t, acme, 'supervisor')]);
  });
  afterAll(() => t.close());

  const create = (company: { auth: { Authorization: string } }, body: Record<string, unknown>) => t.http.post('/v1/channels').set(company.auth).send(body);
  const stored = (company: TestCompany) => t.model<Channel>(Channel.name).find({ companyId: company.companyId }).lean();

  it('creates a whatsapp channel with a 24-hour reply window by default, and other types without one', async () => {
    const whatsapp = await create(acme, { key: 'whatsapp', type: 'whatsapp', name: 'WhatsApp Business', address: '+14155550100' }).expect(201);
    expect(whatsapp.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      key: 'whatsapp',
      type: 'whatsapp',
      name: 'WhatsApp Business',
      address: '+14155550100',
      replyWindowHours: 24,
      teamId: null,
      isActive: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const sms = await create(acme, { key: 'sms:+14155550101', type: 'sms', name: 'SMS' }).expect(201);
    expect(sms.body).toMatchObject({ key: 'sms:+14155550101', replyWindowHours: null, address: null });
    const custom = await create(acme, { key: 'whatsapp.eu', type: 'whatsapp', name: 'EU', replyWindowHours: null, isActive: false }).expect(201);
    expect(custom.body).toMatchObject({ replyWindowHours: null, isActive: false });
    const web = await create(acme, { key: 'web', type: 'web', name: 'Web chat', replyWindowHours: 168 }).expect(201);
    expect(web.body.replyWindowHours).toBe(168);
  });

  it('answers 409 for a key the company already has, and lets another company take it', async () => {
    await create(acme, { key: 'telegram', type: 'other', name: 'Telegram' }).expect(201);
    const taken = await create(acme, { key: 'telegram', type: 'other', name: 'Again' }).expect(409);
    expect(taken.body).toMatchObject({ status: 409, detail: 'A channel with key telegram already exists in your company' });
    await create(globex, { key: 'telegram', type: 'other', name: 'Globex Telegram' }).expect(201);
    expect((await stored(acme)).filter((channel) => channel.key === 'telegram')).toHaveLength(1);
  });

  it.each([
    ['an upper-case key', { key: 'WhatsApp', type: 'whatsapp', name: 'x' }, 'key'],
    ['a key with a space', { key: 'what sapp', type: 'whatsapp', name: 'x' }, 'key'],
    ['a key of 65 characters', { key: 'k'.repeat(65), type: 'other', name: 'x' }, 'key'],
    ['an empty key', { key: '', type: 'other', name: 'x' }, 'key'],
    ['an unknown type', { key: 'fax', type: 'fax', name: 'x' }, 'type'],
    ['no name', { key: 'nameless', type: 'sms' }, 'name'],
    ['a window of 0 hours', { key: 'zero', type: 'whatsapp', name: 'x', replyWindowHours: 0 }, 'replyWindowHours'],
    ['a window of 169 hours', { key: 'long', type: 'whatsapp', name: 'x', replyWindowHours: 169 }, 'replyWindowHours'],
    ['a fractional window', { key: 'half', type: 'whatsapp', name: 'x', replyWindowHours: 1.5 }, 'replyWindowHours'],
    ['an unknown field', { key: 'extra', type: 'sms', name: 'x', color: 'red' }, 'color'],
  ])('answers 400 naming the field for %s, and stores nothing', async (_case, body, field) => {
    const before = (await stored(acme)).length;
    const response = await create(acme, body).expect(400);
    expect(response.body.errors.map((problem: { field: string }) => problem.field)).toContain(field);
    expect(await stored(acme)).toHaveLength(before);
  });

  it('lets any agent list and read, and only admins create, change and delete', async () => {
    const { body: created } = await create(acme, { key: 'email', type: 'email', name: 'Support mail', address: 'help@acme.test' }).expect(201);
    const list = await t.http.get('/v1/channels').set(agent.auth).expect(200);
    expect(list.body.data.map((channel: { key: string }) => channel.key)).toContain('email');
    await t.http.get(`/v1/channels/${created.id}`).set(agent.auth).expect(200);
    const storedOne = () => t.model<Channel>(Channel.name).findOne({ _id: created.id, companyId: acme.companyId }).lean();
    const before = await storedOne();
    expect(before?.name).toBe('Support mail');
    for (const caller of [agent, supervisor]) {
      await create(caller, { key: 'sms2', type: 'sms', name: 'x' }).expect(403);
      await t.http.patch(`/v1/channels/${created.id}`).set(caller.auth).send({ name: 'y' }).expect(403);
      await t.http.delete(`/v1/channels/${created.id}`).set(caller.auth).expect(403);
    }
    expect((await stored(acme)).find((channel) => channel.key === 'sms2')).toBeUndefined();
    expect(await storedOne()).toEqual(before);
  });

  it('changes name, address, window and isActive; key and type are fixed', async () => {
    const { body: created } = await create(acme, { key: 'line', type: 'other', name: 'LINE' }).expect(201);
    const changed = await t.http
      .patch(`/v1/channels/${created.id}`)
      .set(acme.auth)
      .send({ name: 'LINE Official', address: '@acme', replyWindowHours: 48, isActive: false })
      .expect(200);
    expect(changed.body).toMatchObject({ key: 'line', type: 'other', name: 'LINE Official', address: '@acme', replyWindowHours: 48, isActive: false });
    const cleared = await t.http.patch(`/v1/channels/${created.id}`).set(acme.auth).send({ address: null, replyWindowHours: null }).expect(200);
    expect(cleared.body).toMatchObject({ address: null, replyWindowHours: null, name: 'LINE Official' });
    for (const body of [{ key: 'other' }, { type: 'sms' }, { name: null }, { isActive: null }, { replyWindowHours: 200 }]) {
      await t.http.patch(`/v1/channels/${created.id}`).set(acme.auth).send(body).expect(400);
    }
    expect((await t.http.get(`/v1/channels/${created.id}`).set(acme.auth).expect(200)).body).toEqual(cleared.body);
  });

  it('deletes a channel, after which its key has no record (no window)', async () => {
    const { body: created } = await create(acme, { key: 'viber', type: 'other', name: 'Viber', replyWindowHours: 24 }).expect(201);
    const service = t.app.get(ChannelsService);
    expect(await service.replyWindowHours(acme.companyId, 'viber')).toBe(24);
    expect(await t.http.delete(`/v1/channels/${created.id}`).set(acme.auth).expect(200)).toMatchObject({ body: { id: created.id, deleted: true } });
    await t.http.get(`/v1/channels/${created.id}`).set(acme.auth).expect(404);
    await t.http.delete(`/v1/channels/${created.id}`).set(acme.auth).expect(404);
    expect(await service.replyWindowHours(acme.companyId, 'viber')).toBeNull();
  });

  it("answers another company's channel as missing, and never lists it", async () => {
    const { body: own } = await create(globex, { key: 'globex-only', type: 'sms', name: 'Globex SMS' }).expect(201);
    await t.http.get(`/v1/channels/${own.id}`).set(acme.auth).expect(404);
    await t.http.patch(`/v1/channels/${own.id}`).set(acme.auth).send({ name: 'mine now' }).expect(404);
    await t.http.delete(`/v1/channels/${own.id}`).set(acme.auth).expect(404);
    await t.http.get('/v1/channels/not-an-id').set(acme.auth).expect(404);
    const list = await t.http.get('/v1/channels?limit=100').set(acme.auth).expect(200);
    expect(list.body.data.map((channel: { key: string }) => channel.key)).not.toContain('globex-only');
    expect((await t.http.get(`/v1/channels/${own.id}`).set(globex.auth).expect(200)).body.name).toBe('Globex SMS');
  });

  it('pages newest first', async () => {
    const page = await t.http.get('/v1/channels?limit=2').set(acme.auth).expect(200);
    expect(page.body.data).toHaveLength(2);
    const next = await t.http.get(`/v1/channels?limit=100&cursor=${page.body.nextCursor}`).set(acme.auth).expect(200);
    const ids = [...page.body.data, ...next.body.data].map((channel: { id: string }) => channel.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(ids).toHaveLength((await stored(acme)).length);
  });

  it("serves a company's channels from one cached read, refreshed by its writes", async () => {
    const service = t.app.get(ChannelsService);
    await service.windowedKeys(acme.companyId);
    const reads = countChannelReads();
    try {
      // Keys without a record (most conversations' channels) are answered from the same entry.
      for (let i = 0; i < 20; i += 1) await service.replyWindowHours(acme.companyId, `absent-${i}`);
      expect(reads.count).toBe(0);
      const { body: created } = await create(acme, { key: 'fresh', type: 'whatsapp', name: 'Fresh' }).expect(201);
      expect(await service.replyWindowHours(acme.companyId, 'fresh')).toBe(24);
      expect(await service.windowedKeys(acme.companyId)).toContain('fresh');
      expect(reads.count).toBe(1);
      await t.http.patch(`/v1/channels/${created.id}`).set(acme.auth).send({ replyWindowHours: 2 }).expect(200);
      expect(await service.replyWindowHours(acme.companyId, 'fresh')).toBe(2);
      expect(reads.count).toBe(2);
    } finally {
      reads.restore();
    }
  });

  /** Counts the reads of the channels collection made through the driver (the cache reads with findPlain). */
  function countChannelReads() {
    const db = t.model<Channel>(Channel.name).db.db!;
    const original = db.command.bind(db);
    const counter = { count: 0, restore: () => void (db.command = original) };
    db.command = ((command: Record<string, unknown>, ...rest: unknown[]) => {
      if (command.find === 'channels') counter.count += 1;
      return (original as (...args: unknown[]) => unknown)(command, ...rest);
    }) as typeof db.command;
    return counter;
  }
});
