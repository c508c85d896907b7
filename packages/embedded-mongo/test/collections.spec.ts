import { beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, MongoServerError, ServerApiVersion } from 'mongodb';
import mongoose, { Schema } from 'mongoose';
import { engineFixture, type Loose } from './fixture.js';

describe('embedded engine: collection kinds and options (views, capped, validators, collMod, time series, clustered)', () => {
  const fx = engineFixture('collections', { ttlMonitorIntervalMs: 50 });

  it('views: reads run the view pipeline, writes and indexes are refused', async () => {
    const orders = fx.db.collection<Loose>('orders');
    await orders.insertMany([{ _id: 1, status: 'paid', total: 10 }, { _id: 2, status: 'open', total: 5 }, { _id: 3, status: 'paid', total: 7 }]);
    await fx.db.createCollection('paid', { viewOn: 'orders', pipeline: [{ $match: { status: 'paid' } }, { $project: { total: 1 } }] });
    await fx.db.createCollection('big_paid', { viewOn: 'paid', pipeline: [{ $match: { total: { $gt: 8 } } }] });
    const paid = fx.db.collection<Loose>('paid');
    expect(await paid.find({}, { sort: { total: 1 } }).toArray()).toEqual([{ _id: 3, total: 7 }, { _id: 1, total: 10 }]);
    expect(await paid.countDocuments({ total: { $gt: 8 } })).toBe(1);
    expect(await paid.estimatedDocumentCount()).toBe(2);
    expect(await paid.distinct('total')).toEqual([7, 10]);
    expect(await fx.db.collection('big_paid').find().toArray()).toEqual([{ _id: 1, total: 10 }]);
    expect(await paid.aggregate([{ $group: { _id: null, sum: { $sum: '$total' } } }]).toArray()).toEqual([{ _id: null, sum: 17 }]);
    await expect(paid.insertOne({ _id: 9 })).rejects.toMatchObject({ code: 166 });
    await expect(paid.updateOne({}, { $set: { x: 1 } })).rejects.toMatchObject({ code: 166 });
    await expect(paid.createIndex({ total: 1 })).rejects.toMatchObject({ code: 166 });
    const [info] = await fx.db.listCollections({ name: 'paid' }).toArray();
    expect(info).toMatchObject({ name: 'paid', type: 'view', options: { viewOn: 'orders' } });
    await fx.db.command({ collMod: 'paid', viewOn: 'orders', pipeline: [{ $match: { status: 'open' } }] });
    expect(await paid.find().toArray()).toEqual([{ _id: 2, status: 'open', total: 5 }]);
  });

  it('capped collections keep the newest documents within max and size; tailable cursors follow inserts', async () => {
    await fx.db.createCollection('log', { capped: true, size: 4096, max: 3 });
    const log = fx.db.collection<Loose>('log');
    for (let i = 1; i <= 5; i++) await log.insertOne({ _id: i });
    expect((await log.find().toArray()).map((d) => d._id)).toEqual([3, 4, 5]);
    expect((await log.find().sort({ $natural: -1 }).toArray()).map((d) => d._id)).toEqual([5, 4, 3]);
    await log.insertOne({ _id: 6, pad: 'x'.repeat(3000) });
    await log.insertOne({ _id: 7, pad: 'y'.repeat(3000) });
    expect((await log.find().toArray()).map((d) => d._id)).toEqual([7]);
    const cursor = log.find({}, { tailable: true, batchSize: 10 });
    expect((await cursor.next())?._id).toBe(7);
    await log.insertOne({ _id: 8 });
    expect((await cursor.next())?._id).toBe(8);
    await cursor.close();
    await expect(fx.db.collection('orders').find({}, { tailable: true }).toArray()).rejects.toMatchObject({ code: 2 });
    const [info] = await fx.db.listCollections({ name: 'log' }).toArray();
    expect((info as Loose).options).toMatchObject({ capped: true, size: 4096, max: 3 });
  });

  it("create reads capped as MongoDB 7 does: a number is a boolean, size and capped need each other (72)", async () => {
    // Mongoose sends `capped: 1` for a schema's `capped: { size, max }` (its suite, connection.test.js, gh-14611).
    await fx.db.command({ create: 'numeric_capped', capped: 1, size: 4096, max: 2 });
    const [info] = await fx.db.listCollections({ name: 'numeric_capped' }).toArray();
    expect((info as Loose).options).toEqual({ capped: true, size: 4096, max: 2 });
    const coll = fx.db.collection<Loose>('numeric_capped');
    await coll.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
    expect((await coll.find().toArray()).map((d) => d._id)).toEqual([2, 3]);
    await fx.db.command({ create: 'not_capped', capped: 0 });
    expect((await fx.db.listCollections({ name: 'not_capped' }).toArray())[0]).toMatchObject({ options: {} });

    const sizeWithoutCapped = "the 'capped' field needs to be true when either the 'size' or 'max' fields are present";
    await expect(fx.db.command({ create: 'size_only', size: 4096 })).rejects.toMatchObject({ code: 72, codeName: 'InvalidOptions', message: sizeWithoutCapped });
    await expect(fx.db.command({ create: 'max_only', capped: false, max: 5 })).rejects.toMatchObject({ code: 72, message: sizeWithoutCapped });
    await expect(fx.db.command({ create: 'no_size', capped: true })).rejects.toMatchObject({ code: 72, message: "the 'size' field is required when 'capped' is true" });
    await expect(fx.db.command({ create: 'zero_size', capped: true, size: 0 })).rejects.toMatchObject({ code: 51024 });
    await expect(fx.db.command({ create: 'text_capped', capped: 'yes', size: 10 })).rejects.toMatchObject({ code: 14 });
    expect(await fx.db.listCollections({ name: { $in: ['size_only', 'max_only', 'no_size', 'zero_size', 'text_capped'] } }).toArray()).toEqual([]);
  });

  it('validators: $jsonSchema and query validators, levels, actions, bypass, errInfo', async () => {
    await fx.db.createCollection('people', {
      validator: { $jsonSchema: { bsonType: 'object', required: ['name'], properties: { name: { bsonType: 'string', minLength: 2 }, age: { bsonType: 'int', minimum: 0 } } } },
    });
    const people = fx.db.collection<Loose>('people');
    await people.insertOne({ _id: 1, name: 'Ada', age: 36 });
    const err = (await people.insertOne({ _id: 2, age: -1 }).catch((e) => e)) as MongoServerError;
    expect(err).toMatchObject({ code: 121 });
    expect(err.errInfo).toMatchObject({ failingDocumentId: 2, details: { operatorName: '$jsonSchema' } });
    await expect(people.updateOne({ _id: 1 }, { $set: { name: 'A' } })).rejects.toMatchObject({ code: 121 });
    await people.insertOne({ _id: 3 }, { bypassDocumentValidation: true });
    await fx.db.command({ collMod: 'people', validator: { age: { $gte: 18 } }, validationLevel: 'moderate' });
    // Moderate: a document that was already invalid may be updated and stay invalid.
    await people.updateOne({ _id: 3 }, { $set: { note: 'x' } });
    await expect(people.insertOne({ _id: 4, age: 10 })).rejects.toMatchObject({ code: 121 });
    await fx.db.command({ collMod: 'people', validationAction: 'warn' });
    await people.insertOne({ _id: 5, age: 10 });
    await expect(fx.db.createCollection('bad_schema', { validator: { $jsonSchema: { bsonType: 'object', frob: 1 } } })).rejects.toMatchObject({ code: 9 });
    await expect(fx.db.command({ collMod: 'people', validationLevel: 'sometimes' })).rejects.toMatchObject({ code: 2 });
  });

  it('Mongoose: a model whose schema declares a validator-backed collection', async () => {
    const conn = await mongoose.createConnection(`${fx.engine.uri}collections_mongoose`).asPromise();
    try {
      const Model = conn.model('Ticket', new Schema({ title: String }, { collection: 'tickets' }));
      await Model.createCollection({ validator: { $jsonSchema: { required: ['title'] } } });
      await Model.create({ title: 'ok' });
      await expect(Model.collection.insertOne({ other: 1 })).rejects.toMatchObject({ code: 121 });
    } finally {
      await conn.close();
    }
  });

  it('collMod changes a TTL, hides an index and converts an index to unique', async () => {
    const c = fx.db.collection<Loose>('sessions');
    await c.createIndex({ at: 1 }, { expireAfterSeconds: 60 });
    await c.createIndex({ token: 1 });
    const ttl = await fx.db.command({ collMod: 'sessions', index: { keyPattern: { at: 1 }, expireAfterSeconds: 120 } });
    expect(ttl).toMatchObject({ expireAfterSeconds_old: 60, expireAfterSeconds_new: 120 });
    expect((await c.listIndexes().toArray()).find((ix) => ix.name === 'at_1')?.expireAfterSeconds).toBe(120);
    // A hidden index is kept up to date but the planner no longer chooses it, and a hint to it is refused.
    await c.createIndex({ kind: 1 });
    await c.insertOne({ _id: 'h', kind: 'x' });
    expect((await c.find({ kind: 'x' }).explain()).queryPlanner.winningPlan.inputStage?.indexName).toBe('kind_1');
    await fx.db.command({ collMod: 'sessions', index: { name: 'kind_1', hidden: true } });
    expect((await c.find({ kind: 'x' }).explain()).queryPlanner.winningPlan.stage).toBe('COLLSCAN');
    await expect(c.find({ kind: 'x' }).hint('kind_1').toArray()).rejects.toMatchObject({ code: 2 });
    await c.deleteOne({ _id: 'h' });
    await c.insertMany([{ _id: 1, token: 'a' }, { _id: 2, token: 'a' }]);
    await fx.db.command({ collMod: 'sessions', index: { name: 'token_1', prepareUnique: true } });
    await expect(c.insertOne({ _id: 3, token: 'a' })).rejects.toMatchObject({ code: 11000 });
    const violation = (await fx.db.command({ collMod: 'sessions', index: { name: 'token_1', unique: true } }).catch((e) => e)) as MongoServerError;
    expect(violation).toMatchObject({ code: 359 });
    expect(violation.errorResponse.violations).toEqual([{ ids: [1, 2] }]);
    await expect(fx.db.command({ collMod: 'nowhere', validator: {} })).rejects.toMatchObject({ code: 26 });
  });

  it('time series collections accept measurements sharing an _id; clustered collections list their clustered index', async () => {
    await fx.db.createCollection('metrics', { timeseries: { timeField: 't', metaField: 'm', granularity: 'minutes' }, expireAfterSeconds: 3600 });
    const metrics = fx.db.collection<Loose>('metrics');
    const now = Date.now();
    await metrics.insertMany([{ _id: 1, t: new Date(now), m: 'a' }, { _id: 1, t: new Date(now - 1), m: 'b' }]);
    expect((await metrics.find({}, { sort: { t: 1 } }).toArray()).map((d) => d.m)).toEqual(['b', 'a']);
    await expect(metrics.insertOne({ m: 'no time' })).rejects.toMatchObject({ code: 2, message: expect.stringContaining("'t' must be present") });
    const [info] = await fx.db.listCollections({ name: 'metrics' }).toArray();
    expect(info).toMatchObject({ type: 'timeseries', options: { timeseries: { timeField: 't', metaField: 'm', granularity: 'minutes' }, expireAfterSeconds: 3600 } });
    await fx.db.createCollection('clustered', { clusteredIndex: { key: { _id: 1 }, unique: true, name: 'by id' } });
    expect(await fx.db.collection('clustered').listIndexes().toArray()).toEqual([{ v: 2, key: { _id: 1 }, name: 'by id', unique: true, clustered: true }]);
    await fx.db.createCollection('images', { changeStreamPreAndPostImages: { enabled: true } });
    expect((await fx.db.listCollections({ name: 'images' }).toArray())[0]).toMatchObject({ options: { changeStreamPreAndPostImages: { enabled: true } } });
    await expect(fx.db.createCollection('encrypted', { encryptedFields: {} } as Loose)).rejects.toMatchObject({ code: 115 });
  });

  it('time series and clustered collections with expireAfterSeconds expire on their time field and _id', async () => {
    await fx.db.createCollection('readings', { timeseries: { timeField: 'at' }, expireAfterSeconds: 60 });
    await fx.db.createCollection('events', { clusteredIndex: { key: { _id: 1 }, unique: true }, expireAfterSeconds: 60 });
    const old = new Date(Date.now() - 120_000);
    await fx.db.collection<Loose>('readings').insertMany([{ at: old, v: 'old' }, { at: new Date(), v: 'new' }]);
    await fx.db.collection<Loose>('events').insertMany([{ _id: old }, { _id: new Date(Date.now() + 60_000) }]);
    const deadline = Date.now() + 5000;
    const counts = async () => [await fx.db.collection('readings').countDocuments(), await fx.db.collection('events').countDocuments()];
    while ((await counts()).some((n) => n > 1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect((await fx.db.collection('readings').find().toArray()).map((d) => d.v)).toEqual(['new']);
    expect(await fx.db.collection('events').countDocuments()).toBe(1);
  });

  it('hashed indexes answer equality and refuse arrays and uniqueness', async () => {
    const c = fx.db.collection<Loose>('hashed');
    await c.createIndex({ key: 'hashed' });
    await c.insertMany([{ _id: 1, key: 'a' }, { _id: 2, key: 'b' }]);
    const explained = await c.find({ key: 'b' }).explain('executionStats');
    expect(explained.queryPlanner.winningPlan.inputStage).toMatchObject({ stage: 'IXSCAN', indexName: 'key_hashed' });
    expect(await c.find({ key: 'b' }).toArray()).toEqual([{ _id: 2, key: 'b' }]);
    expect(await c.countDocuments({ key: { $gt: 'a' } })).toBe(1);
    await expect(c.insertOne({ _id: 3, key: ['x'] })).rejects.toMatchObject({ code: 16766 });
    await expect(c.createIndex({ other: 'hashed' }, { unique: true })).rejects.toMatchObject({ code: 16764 });
  });
});

describe('embedded engine: server commands, Stable API, let, $out/$merge, maxTimeMS', () => {
  const fx = engineFixture('commands');

  beforeAll(async () => {
    await fx.db.collection<Loose>('items').insertMany([{ _id: 1, x: 11, name: 'a' }, { _id: 2, x: 22, name: 'b' }, { _id: 3, x: 33, name: 'c' }]);
  });

  it('let variables are evaluated expressions, in aggregate, find, update, delete and findAndModify', async () => {
    const items = fx.db.collection<Loose>('items');
    const agg = await items
      .aggregate([{ $match: { $expr: { $eq: ['$_id', '$$id'] } } }, { $project: { _id: 0, y: '$$y', sum: '$$sum' } }], { let: { id: 1, y: { $literal: '$bar' }, sum: { $add: [1, 2] } } })
      .toArray();
    expect(agg).toEqual([{ y: '$bar', sum: 3 }]);
    expect(await items.find({ $expr: { $gt: ['$x', '$$min'] } }, { let: { min: 20 } }).toArray()).toHaveLength(2);
    await items.updateMany({ $expr: { $eq: ['$name', '$$name'] } }, [{ $set: { tagged: '$$tag' } }], { let: { name: 'b', tag: 'yes' } });
    expect(await items.findOne({ _id: 2 })).toMatchObject({ tagged: 'yes' });
    const found = await items.findOneAndUpdate({ $expr: { $eq: ['$_id', '$$id'] } }, { $set: { seen: true } }, { let: { id: 3 }, returnDocument: 'after' });
    expect(found).toMatchObject({ _id: 3, seen: true });
    await items.insertOne({ _id: 4, x: 44 });
    expect(await items.deleteOne({ $expr: { $eq: ['$_id', '$$id'] } }, { let: { id: 4 } })).toMatchObject({ deletedCount: 1 });
    await expect(items.find({ $expr: { $eq: ['$_id', '$$missing'] } }).toArray()).rejects.toMatchObject({ code: 17276 });
  });

  it('$out replaces the target collection; $merge merges into it', async () => {
    const items = fx.db.collection<Loose>('items');
    await fx.db.collection<Loose>('copy').insertOne({ _id: 'old' });
    await fx.db.collection<Loose>('copy').createIndex({ x: 1 });
    expect(await items.aggregate([{ $match: { x: { $gt: 15 } } }, { $project: { x: 1 } }, { $out: 'copy' }]).toArray()).toEqual([]);
    expect(await fx.db.collection('copy').find().toArray()).toEqual([{ _id: 2, x: 22 }, { _id: 3, x: 33 }]);
    expect((await fx.db.collection('copy').listIndexes().toArray()).map((ix) => ix.name)).toEqual(['_id_', 'x_1']);
    await fx.db.collection<Loose>('summary').insertOne({ _id: 2, note: 'kept' });
    await items.aggregate([{ $project: { x: 1 } }, { $merge: { into: 'summary', whenMatched: 'merge', whenNotMatched: 'insert' } }]).toArray();
    expect(await fx.db.collection('summary').find().toArray()).toEqual([{ _id: 2, note: 'kept', x: 22 }, { _id: 1, x: 11 }, { _id: 3, x: 33 }]);
    const dup = await fx.db
      .aggregate([{ $documents: [{ _id: 2 }] }, { $merge: { into: 'summary', whenMatched: 'fail' } }])
      .toArray()
      .catch((e) => e);
    expect(dup).toMatchObject({ code: 11000, errorResponse: { keyPattern: { _id: 1 }, keyValue: { _id: 2 } } });
    await expect(items.aggregate([{ $merge: { into: 'summary', on: 'name' } }]).toArray()).rejects.toMatchObject({ code: 51183 });
  });

  it('serverStatus, getParameter and $listLocalSessions', async () => {
    const status = await fx.db.admin().command({ serverStatus: 1 });
    expect(status).toMatchObject({ version: '7.0.0', process: 'mongod', storageEngine: { name: 'inMemory' } });
    expect(status.connections.current).toBeGreaterThanOrEqual(1);
    expect(status.opcounters.insert).toBeGreaterThanOrEqual(3);
    expect(await fx.db.admin().command({ getParameter: 1, requireApiVersion: 1 })).toMatchObject({ requireApiVersion: false });
    await expect(fx.db.admin().command({ getParameter: 1, noSuchParameter: 1 })).rejects.toMatchObject({ code: 72 });
    const sessions = await fx.client.db('admin').aggregate([{ $listLocalSessions: {} }]).toArray();
    expect(sessions.length).toBeGreaterThanOrEqual(1);
  });

  it('the Stable API: unknown versions and, with apiStrict, commands outside API version 1 are refused', async () => {
    const strict = await new MongoClient(fx.engine.uri, { serverApi: { version: ServerApiVersion.v1, strict: true } }).connect();
    try {
      const items = strict.db('commands').collection<Loose>('items');
      expect(await items.countDocuments()).toBeGreaterThan(0);
      await expect(items.distinct('x')).rejects.toMatchObject({ code: 323, codeName: 'APIStrictError' });
      await expect(strict.db('admin').aggregate([{ $listLocalSessions: {} }]).toArray()).rejects.toMatchObject({ code: 323 });
    } finally {
      await strict.close();
    }
    await expect(fx.db.command({ ping: 1, apiVersion: '2' })).rejects.toMatchObject({ code: 322 });
    await expect(fx.db.command({ ping: 1, apiStrict: true })).rejects.toMatchObject({ code: 4886600 });
  });

  it('maxTimeMS: a scan past its deadline fails with MaxTimeMSExpired', async () => {
    const big = fx.db.collection<Loose>('big');
    await big.insertMany(Array.from({ length: 20_000 }, (_, i) => ({ _id: i, v: i })));
    // $where is not available; a $expr over every document is slow enough to outlast 1 ms.
    const slow = big.find({ $expr: { $eq: [{ $concat: [{ $toString: '$v' }, 'x'] }, 'nope'] } }, { maxTimeMS: 1 });
    await expect(slow.toArray()).rejects.toMatchObject({ code: 50, codeName: 'MaxTimeMSExpired' });
    expect(await big.countDocuments({ v: { $lt: 10 } }, { maxTimeMS: 60_000 })).toBe(10);
  });
});
