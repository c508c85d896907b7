import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { getConnectionToken } from '@nestjs/mongoose';
import { GridFSBucket, type Db } from 'mongodb';
import type { Connection, Model } from 'mongoose';
import { REPLACED_INDEXES, dropReplacedIndexes } from '../../src/database/migrations/replaced-indexes.js';
import { tenantScopePlugin } from '../../src/database/tenancy/tenant-scope.plugin.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = 'docs/scaling.md';

interface Row {
  collection: string;
  /** The shard key's fields in order, or null when the collection stays unsharded. */
  shardKey: string[] | null;
  why: string;
}

interface IndexSpec {
  name: string;
  fields: string[];
  unique: boolean;
}

/** The rows of the table under `heading` in docs/scaling.md, as their cells. */
function tableUnder(heading: string): string[][] {
  const text = readFileSync(join(ROOT, DOC), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${DOC} has no "${heading}" section`);
  const section = text.slice(start + heading.length + 2).split(/\n## /)[0];
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('|---'))
    .slice(1)
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

function collectionRows(): Row[] {
  return tableUnder('## Collections').map(([collection, key, why]) => {
    if (key === 'unsharded') return { collection, shardKey: null, why };
    const fields = [...key.matchAll(/([\w.]+): (?:1|hashed)/g)].map((match) => match[1]);
    if (fields.length === 0) throw new Error(`${DOC}: the shard key of ${collection} ("${key}") is neither unsharded nor { field: 1 | hashed, ... }`);
    return { collection, shardKey: fields, why };
  });
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

const startsWith = (fields: string[], prefix: string[]): boolean => prefix.every((field, at) => fields[at] === field);
const keyText = (fields: string[]): string => `{ ${fields.map((field) => `${field}: 1`).join(', ')} }`;

describe(`the data model is ready to shard (${DOC})`, () => {
  let t: TestApp;
  let db: Db;
  let models: Model<unknown>[];
  /** Every collection the app uses, with its indexes as created in the database and as its schema declares them. */
  const indexes = new Map<string, IndexSpec[]>();
  const rows = collectionRows();
  const byCollection = new Map(rows.map((row) => [row.collection, row]));

  beforeAll(async () => {
    t = await createTestApp();
    const connection = t.app.get<Connection>(getConnectionToken());
    db = connection.db as Db;
    models = Object.values(connection.models) as Model<unknown>[];
    // GridFS makes its collections and their indexes on a bucket's first upload.
    await new Promise<void>((resolve, reject) => {
      new GridFSBucket(db, { bucketName: 'media' })
        .openUploadStream('probe')
        .on('error', reject)
        .on('finish', () => resolve())
        .end(Buffer.from('x'));
    });
    for (const model of models) {
      const declared = model.schema.indexes().map(([fields, options]) => ({
        name: Object.entries(fields)
          .map(([field, kind]) => `${field}_${kind}`)
          .join('_'),
        fields: Object.keys(fields),
        unique: options.unique === true,
      }));
      indexes.set(model.collection.collectionName, declared);
    }
    for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
      if (name.startsWith('system.')) continue;
      const created = (await db.collection(name).listIndexes().toArray()).map((index) => ({
        name: index.name as string,
        fields: Object.keys(index.key as object),
        unique: index.unique === true,
      }));
      const known = indexes.get(name) ?? [];
      const added = created.filter((index) => !known.some((declared) => declared.name === index.name));
      indexes.set(
        name,
        [...known, ...added].filter((index) => index.name !== '_id_'),
      );
    }
  });

  afterAll(async () => {
    await t?.close();
  });

  function schemaOf(collection: string) {
    return models.find((model) => model.collection.collectionName === collection)?.schema;
  }

  const perCompany = (collection: string): boolean => schemaOf(collection)?.path('companyId') !== undefined;

  it('has one row for every collection the app uses, and none for a collection it does not', () => {
    const missing = [...indexes.keys()].filter((collection) => !byCollection.has(collection)).sort();
    const advice = missing.map((collection) => {
      const unique = (indexes.get(collection) ?? []).filter((index) => index.unique).map((index) => keyText(index.fields));
      const key = perCompany(collection) ? '`{ companyId: 1 }`' : '`unsharded`';
      return (
        `Add to ${DOC}, table "Collections":\n| ${collection} | ${key} | <why: per company, or the lookup across companies that keeps it whole> |\n` +
        `(its unique indexes: ${unique.length ? unique.join(', ') : 'none'}; each must start with the shard key; if it is a lane or is ` +
        'read across companies, say `unsharded` and add it to "What grows with what")'
      );
    });
    expect(advice).toEqual([]);
    const duplicated = rows.map((row) => row.collection).filter((collection, at, all) => all.indexOf(collection) !== at);
    expect(duplicated).toEqual([]);
    expect(rows.filter((row) => !indexes.has(row.collection)).map((row) => `${row.collection}: no such collection`)).toEqual([]);
    expect(rows.filter((row) => row.why.length < 10).map((row) => `${row.collection}: say why`)).toEqual([]);
  });

  it('leads the shard key of every collection of per-company data with companyId, and scopes its queries to the tenant', () => {
    const broken = rows
      .filter((row) => row.shardKey !== null && perCompany(row.collection))
      .flatMap((row) => {
        const problems: string[] = [];
        if (row.shardKey?.[0] !== 'companyId') problems.push(`${row.collection}: its documents carry companyId, so its shard key must start with it`);
        const plugins = (schemaOf(row.collection) as unknown as { plugins: { fn: unknown }[] } | undefined)?.plugins ?? [];
        if (!plugins.some((plugin) => plugin.fn === tenantScopePlugin)) {
          problems.push(`${row.collection}: sharded by company, so its schema needs the tenant-scope plugin (queries without companyId refused)`);
        }
        return problems;
      });
    expect(broken).toEqual([]);
  });

  it('starts every unique index of a sharded collection with its shard key, and has an index for the key', () => {
    const broken = rows
      .filter((row) => row.shardKey !== null)
      .flatMap((row) => {
        const key = row.shardKey ?? [];
        const own = indexes.get(row.collection) ?? [];
        const problems = own
          .filter((index) => index.unique && !startsWith(index.fields, key))
          .map((index) => `${row.collection}: unique index ${index.name} ${keyText(index.fields)} does not start with the shard key ${keyText(key)}`);
        if (key[0] !== '_id' && !own.some((index) => startsWith(index.fields, key))) {
          problems.push(`${row.collection}: no index starts with the shard key ${keyText(key)}`);
        }
        return problems;
      });
    expect(broken).toEqual([]);
  });

  it('lists every query that omits companyId, and each names collections of the table', () => {
    const marked = sourceFiles(join(ROOT, 'src'))
      .filter((path) => /\[CROSS_TENANT\]: true/.test(readFileSync(path, 'utf8')))
      .map((path) => relative(ROOT, path))
      .sort();
    const listed = tableUnder('## Queries without companyId');
    const files = listed.map(([file]) => file);
    const unlisted = marked
      .filter((file) => !files.includes(file))
      .map(
        (file) =>
          `Add to ${DOC}, table "Queries without companyId":\n| ${file} | <the collections it reads> | <why it may: unsharded, or a one-time migration> |`,
      );
    const stale = files.filter((file) => !marked.includes(file)).map((file) => `${file} has no CROSS_TENANT query any more: remove its row`);
    expect([...unlisted, ...stale]).toEqual([]);
    const unknown = listed.flatMap(([file, collections]) =>
      collections
        .split(', ')
        .filter((collection) => !byCollection.has(collection))
        .map((collection) => `${file}: ${collection} is not in the table "Collections"`),
    );
    expect(unknown).toEqual([]);
  });

  it('uses no multi-document transaction', () => {
    const transactional = sourceFiles(join(ROOT, 'src')).filter((path) =>
      /\b(startSession|withTransaction|startTransaction)\(/.test(readFileSync(path, 'utf8')),
    );
    expect(transactional.map((path) => relative(ROOT, path))).toEqual([]);
  });

  it('drops a unique index this version replaced once its replacement exists, and only then', async () => {
    const names = async (collection: string) => (await db.collection(collection).listIndexes().toArray()).map((index) => index.name as string);
    for (const { collection, name, by } of REPLACED_INDEXES) {
      expect(await names(collection)).toContain(by);
      expect(await names(collection)).not.toContain(name);
    }
    // A database upgraded from the earlier version: the old index still there.
    await db.collection('messages').createIndex({ dedupeKey: 1 }, { unique: true, sparse: true });
    await db.collection('flow_executions').dropIndex('companyId_1_triggerKey_1');
    await db.collection('flow_executions').createIndex({ triggerKey: 1 }, { unique: true, sparse: true });
    await dropReplacedIndexes(db);
    expect(await names('messages')).not.toContain('dedupeKey_1');
    // Its replacement missing, the old rule stays.
    expect(await names('flow_executions')).toContain('triggerKey_1');
    await dropReplacedIndexes(db);
    expect(await names('flow_executions')).toContain('triggerKey_1');
  });
});
