// The entity operations of the unified format, each mapped onto the Node.js driver's API, with results converted
// to documents as the format describes ("Converting Returned Model Objects to Documents").
import { GridFSBucket, ReadPreference } from 'mongodb';
import { toDriver, toOption } from './match.mjs';

/** Arguments holding documents or pipelines: sent with their BSON types. Others are plain option values. */
const DOCUMENT_ARGUMENTS = new Set([
  'filter', 'update', 'replacement', 'document', 'documents', 'pipeline', 'sort', 'projection', 'let', 'collation', 'hint', 'keys',
  'arrayFilters', 'command', 'requests', 'validator', 'index', 'metadata', 'clusteredIndex', 'timeseries', 'changeStreamPreAndPostImages', 'comment',
]);

function convert(name, value, ctx) {
  if (name === 'session') return ctx.entity(value, 'session');
  if (name === 'readPreference') return new ReadPreference(value.mode, value.tagSets, { maxStalenessSeconds: value.maxStalenessSeconds, hedge: value.hedge });
  if (name === 'returnDocument') {
    const v = String(value).toLowerCase();
    if (v !== 'before' && v !== 'after') throw new Error(`returnDocument must be Before or After, not ${value}`);
    return v;
  }
  return DOCUMENT_ARGUMENTS.has(name) ? toDriver(value) : toOption(value);
}

/** The operation's arguments converted for the driver, without the positional ones listed in `positional`. */
function options(args, ctx, positional = []) {
  const out = {};
  for (const [k, v] of Object.entries(args ?? {})) if (!positional.includes(k)) out[k] = convert(k, v, ctx);
  return out;
}

const arg = (args, name, ctx) => convert(name, args?.[name], ctx);

const bulkResult = (r) => ({
  deletedCount: r.deletedCount,
  insertedCount: r.insertedCount,
  insertedIds: r.insertedIds,
  matchedCount: r.matchedCount,
  modifiedCount: r.modifiedCount,
  upsertedCount: r.upsertedCount,
  upsertedIds: r.upsertedIds,
});

const updateResult = (r) => ({ matchedCount: r.matchedCount, modifiedCount: r.modifiedCount, upsertedCount: r.upsertedCount, ...(r.upsertedId != null ? { upsertedId: r.upsertedId } : {}) });

/** Converts the test's write models ({ insertOne: { document } } ...) to the driver's. */
function writeModels(requests, ctx) {
  return requests.map((model) => {
    const [kind] = Object.keys(model);
    return { [kind]: options(model[kind], ctx) };
  });
}

async function readAll(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function hexSource(source) {
  const hex = source?.$$hexBytes;
  if (typeof hex !== 'string' || hex.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(hex)) throw new Error(`malformed upload source ${JSON.stringify(source)}`);
  return Buffer.from(hex, 'hex');
}

function upload(bucket, id, args, ctx) {
  const opts = options(args, ctx, ['filename', 'source', 'id']);
  const stream = id === undefined ? bucket.openUploadStream(args.filename, opts) : bucket.openUploadStreamWithId(id, args.filename, opts);
  return new Promise((resolve, reject) => {
    stream.once('error', reject);
    stream.once('finish', () => resolve(stream.id));
    stream.end(hexSource(args.source));
  });
}

const collectionOps = {
  aggregate: (c, a, ctx) => c.aggregate(arg(a, 'pipeline', ctx), options(a, ctx, ['pipeline'])).toArray(),
  bulkWrite: async (c, a, ctx) => bulkResult(await c.bulkWrite(writeModels(a.requests, ctx), options(a, ctx, ['requests']))),
  countDocuments: (c, a, ctx) => c.countDocuments(arg(a, 'filter', ctx), options(a, ctx, ['filter'])),
  count: (c, a, ctx) => c.count(arg(a, 'filter', ctx), options(a, ctx, ['filter'])),
  estimatedDocumentCount: (c, a, ctx) => c.estimatedDocumentCount(options(a, ctx)),
  deleteMany: async (c, a, ctx) => ({ deletedCount: (await c.deleteMany(arg(a, 'filter', ctx), options(a, ctx, ['filter']))).deletedCount }),
  deleteOne: async (c, a, ctx) => ({ deletedCount: (await c.deleteOne(arg(a, 'filter', ctx), options(a, ctx, ['filter']))).deletedCount }),
  distinct: (c, a, ctx) => c.distinct(a.fieldName, arg(a, 'filter', ctx) ?? {}, options(a, ctx, ['fieldName', 'filter'])),
  find: (c, a, ctx) => c.find(arg(a, 'filter', ctx) ?? {}, options(a, ctx, ['filter'])).toArray(),
  findOne: (c, a, ctx) => c.findOne(arg(a, 'filter', ctx) ?? {}, options(a, ctx, ['filter'])),
  createFindCursor: async (c, a, ctx) => {
    const cursor = c.find(arg(a, 'filter', ctx) ?? {}, options(a, ctx, ['filter']));
    await cursor.hasNext();
    return cursor;
  },
  findOneAndDelete: (c, a, ctx) => c.findOneAndDelete(arg(a, 'filter', ctx), options(a, ctx, ['filter'])),
  findOneAndReplace: (c, a, ctx) => c.findOneAndReplace(arg(a, 'filter', ctx), arg(a, 'replacement', ctx), options(a, ctx, ['filter', 'replacement'])),
  findOneAndUpdate: (c, a, ctx) => c.findOneAndUpdate(arg(a, 'filter', ctx), arg(a, 'update', ctx), options(a, ctx, ['filter', 'update'])),
  insertOne: async (c, a, ctx) => ({ insertedId: (await c.insertOne(arg(a, 'document', ctx), options(a, ctx, ['document']))).insertedId }),
  insertMany: async (c, a, ctx) => {
    const r = await c.insertMany(arg(a, 'documents', ctx), options(a, ctx, ['documents']));
    return { insertedCount: r.insertedCount, insertedIds: r.insertedIds };
  },
  replaceOne: async (c, a, ctx) => updateResult(await c.replaceOne(arg(a, 'filter', ctx), arg(a, 'replacement', ctx), options(a, ctx, ['filter', 'replacement']))),
  updateOne: async (c, a, ctx) => updateResult(await c.updateOne(arg(a, 'filter', ctx), arg(a, 'update', ctx), options(a, ctx, ['filter', 'update']))),
  updateMany: async (c, a, ctx) => updateResult(await c.updateMany(arg(a, 'filter', ctx), arg(a, 'update', ctx), options(a, ctx, ['filter', 'update']))),
  createIndex: (c, a, ctx) => c.createIndex(arg(a, 'keys', ctx), options(a, ctx, ['keys'])),
  dropIndex: (c, a, ctx) => c.dropIndex(a.name, options(a, ctx, ['name'])),
  dropIndexes: (c, a, ctx) => c.dropIndexes(options(a, ctx)),
  listIndexes: (c, a, ctx) => c.listIndexes(options(a, ctx)).toArray(),
  listIndexNames: async (c, a, ctx) => (await c.listIndexes(options(a, ctx)).toArray()).map((ix) => ix.name),
  drop: (c, a, ctx) => c.drop(options(a, ctx)),
  rename: (c, a, ctx) => c.rename(a.to, options(a, ctx, ['to'])),
  createSearchIndex: (c, a) => c.createSearchIndex(toDriver(a.model)),
  createSearchIndexes: (c, a) => c.createSearchIndexes(toDriver(a.models)),
  dropSearchIndex: (c, a) => c.dropSearchIndex(a.name),
  updateSearchIndex: (c, a) => c.updateSearchIndex(a.name, toDriver(a.definition)),
  listSearchIndexes: (c, a) => (a.name === undefined ? c.listSearchIndexes(toDriver(a.aggregationOptions)) : c.listSearchIndexes(a.name, toDriver(a.aggregationOptions))).toArray(),
};

const databaseOps = {
  aggregate: (d, a, ctx) => d.aggregate(arg(a, 'pipeline', ctx), options(a, ctx, ['pipeline'])).toArray(),
  runCommand: (d, a, ctx) => d.command(arg(a, 'command', ctx), options(a, ctx, ['command', 'commandName'])),
  runCursorCommand: (d, a, ctx) => commandCursor(d, a, ctx).toArray(),
  createCommandCursor: async (d, a, ctx) => {
    const cursor = commandCursor(d, a, ctx);
    await cursor.hasNext();
    return cursor;
  },
  listCollections: (d, a, ctx) => d.listCollections(arg(a, 'filter', ctx) ?? {}, options(a, ctx, ['filter'])).toArray(),
  listCollectionNames: async (d, a, ctx) => (await d.listCollections(arg(a, 'filter', ctx) ?? {}, { ...options(a, ctx, ['filter']), nameOnly: true }).toArray()).map((c) => c.name),
  createCollection: (d, a, ctx) => d.createCollection(a.collection, options(a, ctx, ['collection'])),
  dropCollection: (d, a, ctx) => d.dropCollection(a.collection, options(a, ctx, ['collection'])),
  modifyCollection: (d, a, ctx) => d.command({ collMod: a.collection, ...options(a, ctx, ['collection', 'session']) }, { session: a.session && ctx.entity(a.session, 'session') }),
};

function commandCursor(db, a, ctx) {
  const cursor = db.runCursorCommand(arg(a, 'command', ctx), options(a, ctx, ['command', 'commandName', 'batchSize', 'maxTimeMS', 'comment', 'cursorType', 'timeoutMode']));
  if (a.batchSize !== undefined) cursor.setBatchSize(toOption(a.batchSize));
  if (a.maxTimeMS !== undefined) cursor.setMaxTimeMS(toOption(a.maxTimeMS));
  if (a.comment !== undefined) cursor.setComment(toDriver(a.comment));
  return cursor;
}

/** The test's client write models ({ insertOne: { namespace, document } } ...) as the driver's ({ name, namespace, ... }). */
const clientWriteModels = (models, ctx) =>
  models.map((model) => {
    const [name] = Object.keys(model);
    return { name, ...options(model[name], ctx) };
  });

const clientBulkResult = (r) => ({
  insertedCount: r.insertedCount,
  upsertedCount: r.upsertedCount,
  matchedCount: r.matchedCount,
  modifiedCount: r.modifiedCount,
  deletedCount: r.deletedCount,
  ...(r.insertResults ? { insertResults: Object.fromEntries(r.insertResults), updateResults: Object.fromEntries(r.updateResults), deleteResults: Object.fromEntries(r.deleteResults) } : {}),
});

const clientOps = {
  clientBulkWrite: async (c, a, ctx) => clientBulkResult(await c.bulkWrite(clientWriteModels(a.models, ctx), options(a, ctx, ['models']))),
  listDatabases: async (c, a, ctx) => (await c.db('admin').admin().listDatabases(options(a, ctx))).databases,
  listDatabaseNames: async (c, a, ctx) => (await c.db('admin').admin().listDatabases({ ...options(a, ctx), nameOnly: true })).databases.map((d) => d.name),
  close: async (c) => {
    await c.close();
  },
};

const bucketOps = {
  upload: (b, a, ctx) => upload(b, undefined, a, ctx),
  uploadWithId: (b, a, ctx) => upload(b, toDriver(a.id), a, ctx),
  download: (b, a) => readAll(b.openDownloadStream(toDriver(a.id))),
  downloadByName: (b, a, ctx) => readAll(b.openDownloadStreamByName(a.filename, options(a, ctx, ['filename']))),
  delete: (b, a) => b.delete(toDriver(a.id)),
  rename: (b, a) => b.rename(toDriver(a.id), a.newFilename),
  drop: (b) => b.drop(),
  find: (b, a, ctx) => b.find(arg(a, 'filter', ctx) ?? {}, options(a, ctx, ['filter'])).toArray(),
};

const sessionOps = {
  startTransaction: (s, a, ctx) => s.startTransaction(options(a, ctx)),
  commitTransaction: (s) => s.commitTransaction(),
  abortTransaction: (s) => s.abortTransaction(),
  endSession: (s) => s.endSession(),
  withTransaction: (s, a, ctx) => s.withTransaction(() => ctx.runOperations(a.callback), options(a, ctx, ['callback'])),
};

const cursorOps = {
  iterateUntilDocumentOrError: async (cursor) => {
    for (;;) {
      const doc = await cursor.next();
      if (doc !== null) return doc;
      if (cursor.closed) throw new Error('cursor exhausted before a document was returned');
    }
  },
  iterateOnce: (cursor) => cursor.tryNext(),
  close: async (cursor) => {
    await cursor.close().catch(() => {});
  },
};

/** Operations by entity kind (see runner's `kindOf`). */
export const OPERATIONS = { collection: collectionOps, database: databaseOps, client: clientOps, bucket: bucketOps, session: sessionOps, cursor: cursorOps };

export const newBucket = (db, bucketOptions, ctx) => new GridFSBucket(db, options(bucketOptions, ctx));
