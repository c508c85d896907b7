import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, type Db } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '../index.js';

/**
 * Regression (found by the app): `$push` with `$each` and `$slice` on a field the document does not have yet
 * must apply `$slice` to the array it creates: `{ $push: { a: { $each: [1, 2, 3], $slice: -2 } } }` stores
 * `[2, 3]`, as MongoDB does (mingo alone stores `[1, 2, 3]`).
 */
describe('embedded engine: $push with $slice on a missing field', () => {
  let engine: EmbeddedMongo;
  let client: MongoClient;
  let db: Db;

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    client = await new MongoClient(engine.uri).connect();
    db = client.db('repro');
  });

  afterAll(async () => {
    await client.close();
    await engine.stop();
  });

  it('applies $slice when $push creates the array', async () => {
    const collection = db.collection('push_slice');
    const { insertedId } = await collection.insertOne({});
    await collection.updateOne({ _id: insertedId }, { $push: { a: { $each: [1, 2, 3], $slice: -2 } } } as never);
    expect(await collection.findOne({ _id: insertedId })).toEqual({ _id: insertedId, a: [2, 3] });
  });

  it('applies $slice to an existing array (control)', async () => {
    const collection = db.collection('push_slice_existing');
    const { insertedId } = await collection.insertOne({ a: [0] });
    await collection.updateOne({ _id: insertedId }, { $push: { a: { $each: [1, 2, 3], $slice: -2 } } } as never);
    expect(await collection.findOne({ _id: insertedId })).toEqual({ _id: insertedId, a: [2, 3] });
  });
});
