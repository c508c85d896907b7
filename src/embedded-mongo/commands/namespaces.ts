/** Collection and database commands: create, drop, listCollections, dropDatabase, listDatabases. */
import type { Document } from 'bson';
import { isPlainObject } from '../bson-values.js';
import { MongoCommandError, notSupported } from '../errors.js';
import { compileFilter } from '../query/mingo.js';
import { Collection } from '../storage/collection.js';
import { validateCollectionName } from '../storage/engine.js';
import { collectionName, optionalCount, optionalDocument, type CommandHandler } from './context.js';
import { checkCollation } from './read.js';

/** Fields of a command envelope that are not collection options. */
const ENVELOPE = new Set(['create', '$db', 'lsid', 'txnNumber', 'autocommit', 'startTransaction', 'writeConcern', '$clusterTime', '$readPreference', 'comment', 'maxTimeMS', 'apiVersion', 'apiStrict', 'apiDeprecationErrors']);

/** Collection kinds whose semantics the engine does not implement; accepting them would silently behave differently. */
const REFUSED_CREATE_OPTIONS = ['viewOn', 'pipeline', 'timeseries', 'capped', 'validator', 'clusteredIndex', 'changeStreamPreAndPostImages', 'encryptedFields'];

const create: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'create');
  validateCollectionName(name);
  checkCollation(ctx.body);
  for (const opt of REFUSED_CREATE_OPTIONS)
    if (ctx.body[opt] !== undefined && ctx.body[opt] !== false) throw notSupported(`create option '${opt}' is not supported by the embedded engine`);
  const db = ctx.engine.db(ctx.db);
  if (db.collections.has(name)) throw new MongoCommandError(48, `Collection ${ctx.db}.${name} already exists.`);
  const options: Document = {};
  for (const [k, v] of Object.entries(ctx.body)) if (!ENVELOPE.has(k)) options[k] = v;
  db.collections.set(name, new Collection(ctx.db, name, options));
  return {};
};

const drop: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'drop');
  const db = ctx.engine.databases.get(ctx.db);
  const coll = db?.collections.get(name);
  // Since MongoDB 7.0 dropping a missing collection succeeds.
  if (!coll) return {};
  db!.collections.delete(name);
  return { nIndexesWas: coll.indexes.size, ns: coll.ns };
};

const listCollections: CommandHandler = (ctx) => {
  const matcher = compileFilter(optionalDocument(ctx.body, 'filter'));
  const nameOnly = ctx.body.nameOnly === true;
  const colls = [...(ctx.engine.databases.get(ctx.db)?.collections.values() ?? [])];
  const entries = colls
    .map((c): Document => ({
      name: c.name,
      type: 'collection',
      options: c.options,
      info: { readOnly: false },
      idIndex: c.indexes.get('_id_')!.spec,
    }))
    .filter((e) => matcher.test(e))
    .map((e) => (nameOnly ? { name: e.name, type: e.type } : e));
  const ns = `${ctx.db}.$cmd.listCollections`;
  const cursor = isPlainObject(ctx.body.cursor) ? ctx.body.cursor : {};
  const batch = ctx.engine.cursors.open(ns, entries, optionalCount(cursor, 'batchSize'), null);
  return { cursor: { firstBatch: batch.docs, id: batch.cursorId, ns } };
};

const dropDatabase: CommandHandler = (ctx) => {
  ctx.engine.databases.delete(ctx.db);
  return {};
};

const listDatabases: CommandHandler = (ctx) => {
  const matcher = compileFilter(optionalDocument(ctx.body, 'filter'));
  const databases = [...ctx.engine.databases.values()]
    .filter((db) => db.collections.size > 0)
    .map((db) => ({ name: db.name, sizeOnDisk: 0, empty: [...db.collections.values()].every((c) => c.docs.size === 0) }))
    .filter((d) => matcher.test(d));
  if (ctx.body.nameOnly === true) return { databases: databases.map((d) => ({ name: d.name })) };
  return { databases, totalSize: 0, totalSizeMb: 0 };
};

export const namespaceCommands: Record<string, CommandHandler> = { create, drop, listCollections, dropDatabase, listDatabases };
