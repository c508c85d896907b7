import { describe, expect, it } from '@jest/globals';
import { ObjectId } from 'mongodb';
import mongoose from 'mongoose';
import { engineFixture } from './fixture.js';

const STANDALONE_ERROR = { code: 20, codeName: 'IllegalOperation' };
const SERVER_MESSAGE = 'Transaction numbers are only allowed on a replica set member or mongos';
/** What the driver makes of that error for a write, with a real standalone mongod too: its own message, the server's error inside. */
const REFUSED_WRITE = { message: expect.stringContaining('does not support retryable writes'), originalError: expect.objectContaining(STANDALONE_ERROR) };

describe('embedded engine: connect and basic CRUD', () => {
  const fx = engineFixture('basic');

  it('answers the handshake as a standalone MongoDB 7.0', async () => {
    const hello = await fx.db.admin().command({ hello: 1 });
    expect(hello).toMatchObject({ isWritablePrimary: true, maxWireVersion: 21, minWireVersion: 0, logicalSessionTimeoutMinutes: 30, ok: 1 });
    expect(hello.setName).toBeUndefined();
    expect(hello.compression).toBeUndefined();
    const info = await fx.db.admin().command({ buildInfo: 1 });
    expect(info).toMatchObject({ version: '7.0.0', versionArray: [7, 0, 0, 0] });
  });

  it('inserts, finds, updates and deletes through the driver', async () => {
    const users = fx.db.collection('users');
    const { insertedIds } = await users.insertMany([{ name: 'ada', n: 1 }, { name: 'bob', n: 2 }, { name: 'cy', n: 3 }]);
    expect(await users.find({ n: { $gte: 2 } }).sort({ n: -1 }).project({ _id: 0, name: 1 }).toArray()).toEqual([{ name: 'cy' }, { name: 'bob' }]);
    expect(await users.findOne({ _id: insertedIds[0] })).toEqual({ _id: insertedIds[0], name: 'ada', n: 1 });
    const upd = await users.updateMany({ n: { $lt: 3 } }, { $inc: { n: 10 } });
    expect(upd).toMatchObject({ matchedCount: 2, modifiedCount: 2 });
    expect((await users.deleteOne({ name: 'cy' })).deletedCount).toBe(1);
    expect(await users.countDocuments()).toBe(2);
  });

  it('works through Mongoose, including unique indexes and upserts', async () => {
    const conn = await mongoose.createConnection(`${fx.engine.uri}basic_mongoose`).asPromise();
    try {
      const Thing = conn.model('Thing', new mongoose.Schema({ title: { type: String, unique: true }, companyId: mongoose.Schema.Types.ObjectId }, { timestamps: true }));
      await Thing.init();
      const companyId = new ObjectId();
      const created = await Thing.create({ title: 'x', companyId });
      expect((await Thing.findById(created._id).lean())?.companyId).toEqual(companyId);
      await expect(Thing.create({ title: 'x' })).rejects.toMatchObject({ code: 11000 });
      const upserted = await Thing.findOneAndUpdate({ title: 'y' }, { $set: { companyId } }, { upsert: true, returnDocument: 'after' }).lean();
      expect(upserted).toMatchObject({ title: 'y', companyId });
      expect(upserted?.createdAt).toBeInstanceOf(Date);
    } finally {
      await conn.close();
    }
  });

  describe('transactions, refused as by a standalone mongod', () => {
    it('refuses the first operation of a transaction with the server error, and it writes nothing', async () => {
      const session = fx.client.startSession();
      try {
        session.startTransaction();
        await expect(fx.db.collection('tx').findOne({}, { session })).rejects.toMatchObject({ ...STANDALONE_ERROR, message: SERVER_MESSAGE });
        await session.abortTransaction();
        session.startTransaction();
        await expect(fx.db.collection('tx').insertOne({ _id: 1 as never }, { session })).rejects.toMatchObject(REFUSED_WRITE);
        await session.abortTransaction();
      } finally {
        await session.endSession();
      }
      expect(await fx.db.collection('tx').countDocuments()).toBe(0);
    });

    it('refuses withTransaction before its callback writes anything', async () => {
      const session = fx.client.startSession();
      try {
        const run = session.withTransaction(async () => {
          await fx.db.collection('tx').insertOne({ _id: 2 as never }, { session });
        });
        await expect(run).rejects.toMatchObject(REFUSED_WRITE);
      } finally {
        await session.endSession();
      }
      expect(await fx.db.collection('tx').countDocuments()).toBe(0);
    });

    it('answers commitTransaction and abortTransaction with the same error', async () => {
      for (const command of ['commitTransaction', 'abortTransaction']) {
        await expect(fx.db.admin().command({ [command]: 1, txnNumber: 1, autocommit: false })).rejects.toMatchObject({ ...STANDALONE_ERROR, message: SERVER_MESSAGE });
      }
    });

    it('serves sessions without transactions', async () => {
      const session = fx.client.startSession();
      try {
        await fx.db.collection('tx_session').insertOne({ _id: 3 as never }, { session });
        expect(await fx.db.collection('tx_session').findOne({ _id: 3 as never }, { session })).toEqual({ _id: 3 });
      } finally {
        await session.endSession();
      }
    });
  });
});
