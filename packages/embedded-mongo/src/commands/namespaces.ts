/** Collection and database commands: create, collMod, drop, listCollections, dropDatabase, listDatabases. */
import type { Document } from 'bson';
import { isPlainObject } from '../bson-values.js';
import { compileFilter } from '../query/mingo.js';
import type { Collection } from '../storage/collection.js';
import { collMod, create } from './collection-options.js';
import { collectionName, optionalCount, optionalDocument, type CommandHandler } from './context.js';

const drop: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'drop');
  const db = ctx.engine.databases.get(ctx.db);
  const coll = db?.collections.get(name);
  // Since MongoDB 7.0 dropping a missing collection succeeds.
  if (!coll) return {};
  db!.drop(name);
  return { nIndexesWas: coll.indexes.size, ns: coll.ns };
};

/** A listCollections entry, as MongoDB describes collections, views and time series collections. */
function describe(c: Collection): Document {
  if (c.isView) return { name: c.name, type: 'view', options: c.options, info: { readOnly: true } };
  const type = c.options.timeseries ? 'timeseries' : 'collection';
  return {
    name: c.name,
    type,
    options: c.options,
    info: { readOnly: false },
    ...(c.idIndex && !c.options.clusteredIndex ? { idIndex: c.idIndex.spec } : {}),
  };
}

const listCollections: CommandHandler = (ctx) => {
  const matcher = compileFilter(optionalDocument(ctx.body, 'filter'));
  const nameOnly = ctx.body.nameOnly === true;
  const colls = [...(ctx.engine.databases.get(ctx.db)?.collections.values() ?? [])];
  const entries = colls
    .map(describe)
    .filter((e) => matcher.test(e))
    .map((e) => (nameOnly ? { name: e.name, type: e.type } : e));
  const ns = `${ctx.db}.$cmd.listCollections`;
  const cursor = isPlainObject(ctx.body.cursor) ? ctx.body.cursor : {};
  const batch = ctx.engine.cursors.open(ns, entries, optionalCount(cursor, 'batchSize'), null);
  return { cursor: { firstBatch: batch.docs, id: batch.cursorId, ns } };
};

const dropDatabase: CommandHandler = (ctx) => {
  ctx.engine.dropDatabase(ctx.db);
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

export const namespaceCommands: Record<string, CommandHandler> = { create, collMod, drop, listCollections, dropDatabase, listDatabases };
