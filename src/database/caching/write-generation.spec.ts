import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { trackWrites, WriteGeneration } from './write-generation.js';

describe('trackWrites', () => {
  let engine: EmbeddedMongo;
  let conn: Connection;
  let Thing: Model<{ name: string; n?: number | null }>;
  const writes = new WriteGeneration();

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    conn = await mongoose.createConnection(`${engine.uri}write_generation`).asPromise();
    const schema = new Schema({ name: { type: String, required: true }, n: Number });
    schema.index({ name: 1 }, { unique: true });
    schema.plugin(trackWrites(writes));
    Thing = conn.model('Thing', schema);
    await Thing.init();
  });

  afterAll(async () => {
    await conn.close();
    await engine.stop();
  });

  /** How much `write` moved the count. */
  async function bumps(write: () => Promise<unknown>): Promise<number> {
    const before = writes.current;
    await write().catch(() => undefined);
    return writes.current - before;
  }

  it('moves once the write is done, for every kind of write through the model', async () => {
    expect(await bumps(() => Thing.create({ name: 'a', n: 1 }))).toBe(1);
    expect(await bumps(() => Thing.insertMany([{ name: 'b' }, { name: 'c' }]))).toBe(1);
    expect(await bumps(() => Thing.updateOne({ name: 'a' }, { $inc: { n: 1 } }).exec())).toBe(1);
    expect(await bumps(() => Thing.updateMany({}, { $set: { n: 0 } }).exec())).toBe(1);
    expect(await bumps(() => Thing.findOneAndUpdate({ name: 'a' }, { $set: { n: 5 } }).exec())).toBe(1);
    expect(await bumps(() => Thing.replaceOne({ name: 'c' }, { name: 'c', n: 9 }).exec())).toBe(1);
    expect(await bumps(() => Thing.bulkWrite([{ updateOne: { filter: { name: 'b' }, update: { $set: { n: 2 } } } }]))).toBe(1);
    const doc = await Thing.findOne({ name: 'a' }).orFail().exec();
    doc.n = 6;
    expect(await bumps(() => doc.save())).toBe(1);
    expect(await bumps(() => Thing.deleteOne({ name: 'c' }).exec())).toBe(1);
    expect(await bumps(() => Thing.findOneAndDelete({ name: 'b' }).exec())).toBe(1);
    expect(await bumps(() => Thing.deleteMany({}).exec())).toBe(1);
  });

  it('moves after a failed write too, and not for reads', async () => {
    await Thing.create({ name: 'x' });
    await Thing.create({ name: 'y' });
    expect(await bumps(() => Thing.updateOne({ name: 'y' }, { $set: { name: 'x' } }).exec())).toBe(1);
    expect(await bumps(() => Thing.create({ name: 'x' }))).toBe(1);
    expect(await bumps(() => Thing.insertMany([{ name: 'x' }]))).toBe(1);
    expect(await bumps(() => Thing.bulkWrite([{ insertOne: { document: { name: 'z' } } }, { insertOne: { document: { name: 'x' } } }]))).toBe(1);
    expect(await bumps(() => Thing.find({}).lean().exec())).toBe(0);
    expect(await bumps(() => Thing.countDocuments({}).exec())).toBe(0);
  });
});
