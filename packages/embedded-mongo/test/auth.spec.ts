import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Binary, MongoClient } from 'mongodb';
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/index.js';

const USER = 'app';
const PASSWORD = 'correct horse: battery staple';

describe('embedded engine: SCRAM-SHA-256 authentication', () => {
  let engine: EmbeddedMongo;
  const base = () => engine.uri.replace('mongodb://', '');
  const uri = (user: string, password: string, options = 'authSource=admin') =>
    `mongodb://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${base()}?${options}`;

  beforeAll(async () => {
    engine = await startEmbeddedMongo({ users: [{ user: USER, password: PASSWORD }, { user: 'ops', password: 'pässwörd ünïcode' }] });
  });

  afterAll(async () => {
    await engine.stop();
  });

  it('lets the driver in with the right user and password, by its standard handshake', async () => {
    for (const [user, password] of [
      [USER, PASSWORD],
      ['ops', 'pässwörd ünïcode'],
    ]) {
      const client = await new MongoClient(uri(user, password), { serverSelectionTimeoutMS: 2000 }).connect();
      try {
        await client.db('app').collection('c').insertOne({ user });
        expect(await client.db('app').collection('c').findOne({ user }, { projection: { _id: 0 } })).toEqual({ user });
      } finally {
        await client.close();
      }
    }
  });

  it('answers the speculative first step inside hello, and the mechanisms of a user', async () => {
    const client = await new MongoClient(uri(USER, PASSWORD)).connect();
    try {
      const nonce = randomBytes(24).toString('base64');
      const hello = await client.db('admin').command({
        hello: 1,
        saslSupportedMechs: `admin.${USER}`,
        speculativeAuthenticate: { saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: new Binary(Buffer.from(`n,,n=${USER},r=${nonce}`)), db: 'admin' },
      });
      expect(hello.saslSupportedMechs).toEqual(['SCRAM-SHA-256']);
      expect(hello.speculativeAuthenticate).toMatchObject({ conversationId: 1, done: false });
      expect(Buffer.from(hello.speculativeAuthenticate.payload.buffer).toString()).toMatch(new RegExp(`^r=${nonce.replace(/[+/]/g, '\\$&')}[^,]+,s=[^,]+,i=15000$`));
    } finally {
      await client.close();
    }
  });

  it('runs the conversation through saslStart and saslContinue, with the final empty step when the client asks for it', async () => {
    // One pooled connection: the one the conversation authenticates.
    const client = await new MongoClient(engine.uri, { maxPoolSize: 1 }).connect();
    try {
      const admin = client.db('admin');
      const nonce = randomBytes(24).toString('base64');
      const clientFirstBare = `n=${USER},r=${nonce}`;
      const start = await admin.command({ saslStart: 1, mechanism: 'SCRAM-SHA-256', payload: new Binary(Buffer.from(`n,,${clientFirstBare}`)) });
      const serverFirst = Buffer.from(start.payload.buffer).toString();
      const fields = Object.fromEntries(serverFirst.split(',').map((part) => [part[0], part.slice(2)]));
      // RFC 5802 from the client's side, written from the RFC (the driver's own code is not reachable here).
      const hmac = (key: Buffer, text: string) => createHmac('sha256', key).update(text).digest();
      const salted = pbkdf2Sync(PASSWORD, Buffer.from(fields.s, 'base64'), Number(fields.i), 32, 'sha256');
      const clientKey = hmac(salted, 'Client Key');
      const withoutProof = `c=biws,r=${fields.r}`;
      const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
      const signature = hmac(createHash('sha256').update(clientKey).digest(), authMessage);
      const proof = Buffer.from(clientKey.map((byte, i) => byte ^ signature[i])).toString('base64');
      const next = await admin.command({ saslContinue: 1, conversationId: start.conversationId, payload: new Binary(Buffer.from(`${withoutProof},p=${proof}`)) });
      expect(next.done).toBe(false);
      expect(Buffer.from(next.payload.buffer).toString()).toBe(`v=${hmac(hmac(salted, 'Server Key'), authMessage).toString('base64')}`);
      expect(await admin.command({ saslContinue: 1, conversationId: start.conversationId, payload: new Binary(Buffer.alloc(0)) })).toMatchObject({ done: true });
      await client.db('app').collection('c').insertOne({ via: 'saslContinue' });
      expect(await client.db('app').collection('c').countDocuments({ via: 'saslContinue' })).toBe(1);
    } finally {
      await client.close();
    }
  });

  it.each([
    ['a wrong password', () => uri(USER, 'wrong password')],
    ['an unknown user', () => uri('nobody', PASSWORD)],
    ['a user looked up in another database', () => uri(USER, PASSWORD, 'authSource=app')],
  ])('refuses %s with AuthenticationFailed', async (_what, address) => {
    const client = new MongoClient(address(), { serverSelectionTimeoutMS: 2000 });
    await expect(client.connect()).rejects.toMatchObject({ code: 18, codeName: 'AuthenticationFailed', message: 'Authentication failed.' });
    await client.close();
  });

  it('refuses SCRAM-SHA-1', async () => {
    const client = new MongoClient(uri(USER, PASSWORD, 'authSource=admin&authMechanism=SCRAM-SHA-1'), { serverSelectionTimeoutMS: 2000 });
    await expect(client.connect()).rejects.toMatchObject({ code: 334, codeName: 'MechanismUnavailable' });
    await client.close();
  });

  it('answers the handshake without credentials, and Unauthorized to anything else', async () => {
    const client = await new MongoClient(engine.uri).connect();
    try {
      expect(await client.db('admin').command({ ping: 1 })).toEqual({ ok: 1 });
      expect(await client.db('admin').command({ hello: 1 })).toMatchObject({ isWritablePrimary: true });
      await expect(client.db('app').collection('c').findOne({})).rejects.toMatchObject({ code: 13, codeName: 'Unauthorized', message: 'Command find requires authentication' });
      await expect(client.db('app').collection('c').insertOne({ sneaky: true })).rejects.toMatchObject({ code: 13 });
      await expect(client.db('admin').command({ listDatabases: 1 })).rejects.toMatchObject({ code: 13 });
    } finally {
      await client.close();
    }
    const admin = await new MongoClient(uri(USER, PASSWORD)).connect();
    expect(await admin.db('app').collection('c').countDocuments({ sneaky: true })).toBe(0);
    await admin.close();
  });

  it('refuses to listen on a non-loopback address without users', async () => {
    await expect(startEmbeddedMongo({ host: '0.0.0.0' })).rejects.toThrow('listening on 0.0.0.0 (not a loopback address) requires access control');
    const open = await startEmbeddedMongo({ host: '0.0.0.0', users: [{ user: USER, password: PASSWORD }] });
    await open.stop();
  });
});
