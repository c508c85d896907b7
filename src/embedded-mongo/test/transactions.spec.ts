import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, type Db } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '../index.js';

const STANDALONE_ERROR = { code: 20, codeName: 'IllegalOperation' };
const SERVER_MESSAGE = 'Transaction numbers are only allowed on a replica set member or mongos';
/** What the driver makes of that error for a write, with a real standalone mongod too: its own message, the server's error inside. */
const REFUSED_WRITE = { message: expect.stringContaining('does not support retryable writes'), originalError: expect.objectContaining(STANDALONE_ERROR) };

describe('embedded engine: transactions are refused, as by a standalone mongod', () => {
  let engine: EmbeddedMongo;
  let client: MongoClient;
  let db: Db;

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    client = await new MongoClient(engine.uri).connect();
    db = client.db('transactions');
  });

  afterAll(async () => {
    await client.close();
    await engine.stop();
  });

  it('refuses the first operation of a transaction with the server error, and it writes nothing', async () => {
    const session = client.startSession();
    try {
      session.startTransaction();
      await expect(db.collection('t').findOne({}, { session })).rejects.toMatchObject({ ...STANDALONE_ERROR, message: SERVER_MESSAGE });
      await session.abortTransaction();
      session.startTransaction();
      await expect(db.collection('t').insertOne({ _id: 1 as never }, { session })).rejects.toMatchObject(REFUSED_WRITE);
      await session.abortTransaction();
    } finally {
      await session.endSession();
    }
    expect(await db.collection('t').countDocuments()).toBe(0);
  });

  it('refuses withTransaction before its callback writes anything', async () => {
    const session = client.startSession();
    try {
      const run = session.withTransaction(async () => {
        await db.collection('t').insertOne({ _id: 2 as never }, { session });
      });
      await expect(run).rejects.toMatchObject(REFUSED_WRITE);
    } finally {
      await session.endSession();
    }
    expect(await db.collection('t').countDocuments()).toBe(0);
  });

  it('answers commitTransaction and abortTransaction with the same error', async () => {
    for (const command of ['commitTransaction', 'abortTransaction']) {
      await expect(db.admin().command({ [command]: 1, txnNumber: 1, autocommit: false })).rejects.toMatchObject({ ...STANDALONE_ERROR, message: SERVER_MESSAGE });
    }
  });

  it('serves sessions without transactions', async () => {
    const session = client.startSession();
    try {
      await db.collection('s').insertOne({ _id: 3 as never }, { session });
      expect(await db.collection('s').findOne({ _id: 3 as never }, { session })).toEqual({ _id: 3 });
    } finally {
      await session.endSession();
    }
  });
});
