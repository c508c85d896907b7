import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, type Db } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '../index.js';

/**
 * Regression (found by the app): findAndModify with `new: true` and `fields` must answer the updated document
 * even when the update changes a field the query filters on. Mongoose always sends `fields` for a schema with a
 * `select: false` path (agents' passwordHash), so { _id, isActive: true } → { isActive: false } used to look like
 * "no match": the projection re-applied the filter to the post-image.
 */
describe('embedded engine: findAndModify with a projection and new: true', () => {
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

  it.each([
    ['an exclusion projection', { secret: 0 }],
    ['an inclusion projection', { flag: 1 }],
  ])('answers the updated document with %s when the update changes a filtered field', async (_name, projection) => {
    const collection = db.collection(`agents_${Object.values(projection)[0]}`);
    const { insertedId } = await collection.insertOne({ flag: true, secret: 's' });

    const updated = await collection.findOneAndUpdate(
      { _id: insertedId, flag: true },
      { $set: { flag: false } },
      { returnDocument: 'after', projection },
    );

    expect(await collection.findOne({ _id: insertedId })).toMatchObject({ flag: false });
    expect(updated).toMatchObject({ _id: insertedId, flag: false });
  });
});
