/** Index commands: createIndexes, listIndexes, dropIndexes. */
import type { Document } from 'bson';
import { compareBson, isPlainObject } from '../bson-values.js';
import { MongoCommandError, typeMismatch } from '../errors.js';
import { parseCollation } from '../query/collation.js';
import type { Collection } from '../storage/collection.js';
import { isTextSpec, normalizeTextSpec } from '../storage/text-index.js';
import { collectionName, optionalCount, type CommandContext, type CommandHandler } from './context.js';
import { refuseView } from './views.js';

function existing(ctx: CommandContext, command: string) {
  const name = collectionName(ctx, command);
  const coll = ctx.engine.collection(ctx.db, name);
  if (!coll) throw new MongoCommandError(26, `ns does not exist: ${ctx.db}.${name}`);
  refuseView(coll, '');
  return coll;
}

/**
 * An index spec as MongoDB stores it: text indexes normalised (`_fts`/`_ftsx`, weights...), the collation filled in
 * (the collection's default when none is given; none for `simple`).
 */
function normalizeSpec(coll: Collection, spec: Document): Document {
  const out = isTextSpec(spec) ? normalizeTextSpec(spec) : { ...spec };
  const collator = out.collation !== undefined ? parseCollation(out.collation) : coll.collator;
  if (collator) out.collation = collator.spec;
  else delete out.collation;
  return out;
}

const createIndexes: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'createIndexes');
  const specs = ctx.body.indexes;
  if (!Array.isArray(specs) || specs.length === 0 || !specs.every(isPlainObject))
    throw typeMismatch("BSON field 'createIndexes.indexes' must be a non-empty array of objects");
  const db = ctx.engine.db(ctx.db);
  refuseView(db.collections.get(name), '');
  const createdCollectionAutomatically = !db.collections.has(name);
  const coll = db.ensure(name);
  const before = coll.indexes.size;
  const created: string[] = [];
  try {
    for (const spec of specs as Document[]) {
      const normalized = normalizeSpec(coll, spec);
      if (coll.createIndex(normalized)) created.push(normalized.name as string);
    }
  } catch (err) {
    // A batch of index builds succeeds or fails as a whole.
    for (const n of created) coll.dropIndex(n);
    if (createdCollectionAutomatically) db.drop(name);
    throw err;
  }
  return {
    numIndexesBefore: before,
    numIndexesAfter: coll.indexes.size,
    createdCollectionAutomatically,
    ...(created.length ? {} : { note: 'all indexes already exist' }),
  };
};

const listIndexes: CommandHandler = (ctx) => {
  const coll = existing(ctx, 'listIndexes');
  const ns = `${ctx.db}.$cmd.listIndexes.${coll.name}`;
  const cursor = isPlainObject(ctx.body.cursor) ? ctx.body.cursor : {};
  const specs = [...coll.indexes.values()].map((ix) => ix.spec);
  const batch = ctx.engine.cursors.open(ns, specs, optionalCount(cursor, 'batchSize'), null);
  return { cursor: { firstBatch: batch.docs, id: batch.cursorId, ns } };
};

const dropIndexes: CommandHandler = (ctx) => {
  const coll = existing(ctx, 'dropIndexes');
  const nIndexesWas = coll.indexes.size;
  const target = ctx.body.index;
  if (target === '*') {
    for (const ix of [...coll.indexes.values()]) if (ix !== coll.idIndex) coll.dropIndex(ix.name);
  } else if (typeof target === 'string') {
    coll.dropIndex(target);
  } else if (Array.isArray(target)) {
    const missing = target.find((n) => typeof n !== 'string' || !coll.indexes.has(n));
    if (missing !== undefined) throw new MongoCommandError(27, `index not found with name [${String(missing)}]`);
    for (const n of target as string[]) coll.dropIndex(n);
  } else if (isPlainObject(target)) {
    const ix = [...coll.indexes.values()].find((i) => compareBson(i.spec.key, target) === 0);
    if (!ix) throw new MongoCommandError(27, `can't find index with key: ${JSON.stringify(target)}`);
    coll.dropIndex(ix.name);
  } else {
    throw typeMismatch("BSON field 'dropIndexes.index' must be a string, an array of strings or a key pattern");
  }
  return { nIndexesWas };
};

export const indexCommands: Record<string, CommandHandler> = { createIndexes, listIndexes, dropIndexes };
