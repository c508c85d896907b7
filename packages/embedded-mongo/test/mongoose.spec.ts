import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GridFSBucket, MongoClient } from 'mongodb';
import mongoose, { Schema, type Connection } from 'mongoose';
import { randomBytes } from 'node:crypto';
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/index.js';

describe('embedded engine: Mongoose and GridFS', () => {
  let engine: EmbeddedMongo;
  let conn: Connection;
  let Agent: mongoose.Model<any>;
  let Conversation: mongoose.Model<any>;

  const agentSchema = new Schema({ companyId: { type: Schema.Types.ObjectId, required: true }, email: { type: String, required: true }, name: String }, { timestamps: true });
  agentSchema.index({ companyId: 1, email: 1 }, { unique: true });
  const conversationSchema = new Schema(
    {
      companyId: { type: Schema.Types.ObjectId, required: true },
      status: { type: String, enum: ['bot', 'queued', 'human', 'closed'], default: 'bot' },
      assignedAgentId: { type: Schema.Types.ObjectId, ref: 'Agent', default: null },
      tags: [String],
      lastMessageAt: Date,
    },
    { timestamps: true },
  );
  conversationSchema.index({ companyId: 1, status: 1, createdAt: -1, _id: -1 });

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    conn = await mongoose.createConnection(`${engine.uri}parley_test`).asPromise();
    Agent = conn.model('Agent', agentSchema);
    Conversation = conn.model('Conversation', conversationSchema);
  });

  afterAll(async () => {
    await conn.close();
    await engine.stop();
  });

  it('syncs indexes, enforces them and serves the list query with populate', async () => {
    await Agent.syncIndexes();
    await Conversation.syncIndexes();
    expect(await Conversation.syncIndexes()).toEqual([]);
    expect((await Conversation.listIndexes()).map((i) => i.name)).toEqual(['_id_', 'companyId_1_status_1_createdAt_-1__id_-1']);

    const companyId = new mongoose.Types.ObjectId();
    const agent = await Agent.create({ companyId, email: 'ann@x.io', name: 'Ann' });
    await expect(Agent.create({ companyId, email: 'ann@x.io' })).rejects.toMatchObject({ code: 11000, keyValue: { companyId, email: 'ann@x.io' } });
    await Agent.create({ companyId: new mongoose.Types.ObjectId(), email: 'ann@x.io' });

    for (let i = 0; i < 60; i++) {
      await Conversation.create({ companyId, status: i % 2 ? 'queued' : 'human', assignedAgentId: i % 2 ? null : agent._id, tags: i % 3 ? [] : ['vip'] });
    }
    const page = await Conversation.find({ companyId, status: 'human' }).sort({ createdAt: -1, _id: -1 }).limit(10).populate('assignedAgentId', 'name').lean();
    expect(page).toHaveLength(10);
    expect(page.every((c) => (c.assignedAgentId as unknown as { name: string }).name === 'Ann')).toBe(true);
    const next = await Conversation.find({ companyId, status: 'human', $or: [{ createdAt: { $lt: page[9].createdAt } }, { createdAt: page[9].createdAt, _id: { $lt: page[9]._id } }] })
      .sort({ createdAt: -1, _id: -1 })
      .limit(100)
      .lean();
    expect(next).toHaveLength(20);
    expect(new Set([...page, ...next].map((c) => String(c._id))).size).toBe(30);
    expect(await Conversation.countDocuments({ companyId, tags: 'vip' })).toBe(20);
    expect((await Conversation.distinct('status', { companyId })).sort()).toEqual(['human', 'queued']);
  });

  it('findOneAndUpdate with returnDocument, upsert and $setOnInsert timestamps', async () => {
    const companyId = new mongoose.Types.ObjectId();
    const created = await Conversation.findOneAndUpdate({ companyId, status: 'bot' }, { $set: { lastMessageAt: new Date() } }, { upsert: true, returnDocument: 'after' }).lean();
    expect(created).toMatchObject({ companyId, status: 'bot' });
    expect(created?.createdAt).toBeInstanceOf(Date);
    const before = await Conversation.findOneAndUpdate({ _id: created!._id }, { $set: { status: 'queued' }, $addToSet: { tags: 'new' } }, { returnDocument: 'before' }).lean();
    expect(before?.status).toBe('bot');
    const doc = await Conversation.findById(created!._id);
    expect(doc?.status).toBe('queued');
    expect(doc?.tags).toEqual(['new']);
    doc!.tags.push('again');
    await doc!.save();
    expect((await Conversation.findById(created!._id).lean())?.tags).toEqual(['new', 'again']);
  });

  it('runs code with sessions, and refuses transactions as a standalone mongod does, writing nothing', async () => {
    const companyId = new mongoose.Types.ObjectId();
    const session = await conn.startSession();
    await Agent.create([{ companyId, email: 'session@x.io' }], { session });
    await Agent.updateOne({ companyId }, { $set: { name: 'Sessions' } }, { session });
    await session.endSession();
    expect(await Agent.findOne({ companyId }).lean()).toMatchObject({ name: 'Sessions' });

    const refused = conn.transaction(async (tx) => {
      await Agent.create([{ companyId, email: 'tx@x.io' }], { session: tx });
    });
    // The driver rewords this error for a write, as it does with a real standalone mongod (see basic.spec.ts).
    await expect(refused).rejects.toMatchObject({ originalError: expect.objectContaining({ code: 20, codeName: 'IllegalOperation' }) });
    expect(await Agent.countDocuments({ companyId })).toBe(1);
  });

  it('Mongoose suite cases: an array of DBRefs queried with $elemMatch (gh-8577), a capped collection with capped: 1 (gh-14611)', async () => {
    const Post = conn.model('Post', new Schema({ title: String, refs: [Schema.Types.Mixed] }));
    const author = new mongoose.Types.ObjectId();
    await Post.create([
      { title: 'a', refs: [new mongoose.mongo.DBRef('authors', author), new mongoose.mongo.DBRef('tags', 1 as never)] },
      { title: 'b', refs: [new mongoose.mongo.DBRef('tags', 1 as never)] },
    ]);
    const found = await Post.find({ refs: { $elemMatch: { $ref: 'authors', $id: author } } }).lean();
    expect(found.map((p) => p.title)).toEqual(['a']);
    expect(await Post.countDocuments({ 'refs.$id': 1 })).toBe(2);

    await conn.createCollection('capped_log', { capped: 1, size: 4096, max: 2 } as never);
    const log = conn.collection('capped_log');
    await log.insertMany([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect((await log.find().toArray()).map((d) => d.n)).toEqual([2, 3]);
    expect(await conn.db!.collection('capped_log').isCapped()).toBe(true);
  });

  it('stores and reads back a multi-chunk GridFS file', async () => {
    const client = await new MongoClient(engine.uri).connect();
    try {
      const bucket = new GridFSBucket(client.db('parley_test'), { bucketName: 'media', chunkSizeBytes: 64 * 1024 });
      const data = randomBytes(300 * 1024 + 17);
      const id = await new Promise((resolve, reject) => {
        const upload = bucket.openUploadStream('photo.jpg', { metadata: { contentType: 'image/jpeg' } });
        upload.once('finish', () => resolve(upload.id)).once('error', reject);
        upload.end(data);
      });
      expect(await client.db('parley_test').collection('media.chunks').countDocuments({ files_id: id })).toBe(5);
      const chunks: Buffer[] = [];
      await new Promise((resolve, reject) => {
        bucket.openDownloadStream(id as never).on('data', (c: Buffer) => chunks.push(c)).once('end', resolve).once('error', reject);
      });
      expect(Buffer.concat(chunks).equals(data)).toBe(true);
      const partial: Buffer[] = [];
      await new Promise((resolve, reject) => {
        bucket.openDownloadStream(id as never, { start: 70_000, end: 140_000 }).on('data', (c: Buffer) => partial.push(c)).once('end', resolve).once('error', reject);
      });
      expect(Buffer.concat(partial).equals(data.subarray(70_000, 140_000))).toBe(true);
      const [file] = await bucket.find({ filename: 'photo.jpg' }).toArray();
      expect(file).toMatchObject({ length: data.length, metadata: { contentType: 'image/jpeg' } });
      await bucket.delete(id as never);
      expect(await client.db('parley_test').collection('media.chunks').countDocuments()).toBe(0);
    } finally {
      await client.close();
    }
  });
});
