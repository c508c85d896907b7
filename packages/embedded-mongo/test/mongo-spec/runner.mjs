// Runs the tests of one unified-format file against a server: initial data, entities, operations with their
// expected results and errors, and the final collection contents. Event expectations are not checked (commands are
// recorded only for the special operations that inspect them).
import { AbstractCursor, ClientSession, Collection, Db, GridFSBucket, MongoBulkWriteError, MongoClient, MongoServerError } from 'mongodb';
import { match, matchExactly, show, toDriver, toOption } from './match.mjs';
import { newBucket, OPERATIONS } from './operations.mjs';
import { requirementsUnmet, unrunnable } from './requirements.mjs';

class AssertionFailure extends Error {}

const fail = (message) => {
  throw new AssertionFailure(message);
};

function kindOf(value) {
  if (value instanceof MongoClient) return 'client';
  if (value instanceof Db) return 'database';
  if (value instanceof Collection) return 'collection';
  if (value instanceof GridFSBucket) return 'bucket';
  if (value instanceof ClientSession) return 'session';
  if (value instanceof AbstractCursor) return 'cursor';
  return 'value';
}

/** Driver options for a client entity: its uriOptions, serverApi and event monitoring. */
function clientOptions(spec) {
  const opts = { ...toDriver(spec.uriOptions ?? {}) };
  if (spec.serverApi) opts.serverApi = { version: spec.serverApi.version, strict: spec.serverApi.strict, deprecationErrors: spec.serverApi.deprecationErrors };
  if (spec.observeEvents?.length) opts.monitorCommands = true;
  return opts;
}

const collectionOptions = (o) => {
  const out = {};
  if (o?.readConcern) out.readConcern = o.readConcern;
  if (o?.writeConcern) out.writeConcern = toDriver(o.writeConcern);
  if (o?.readPreference) out.readPreference = o.readPreference.mode;
  if (o?.timeoutMS !== undefined) out.timeoutMS = toOption(o.timeoutMS);
  return out;
};

/** The state of one test: its entity map, and what is recorded about clients. */
class TestContext {
  entities = new Map();
  commands = new Map();
  checkedOut = new Map();

  constructor(uri, internal) {
    this.uri = uri;
    this.internal = internal;
  }

  entity(name, kind) {
    if (!this.entities.has(name)) throw new Error(`unknown entity ${name}`);
    const value = this.entities.get(name);
    if (kind && kindOf(value) !== kind) throw new Error(`entity ${name} is not a ${kind}`);
    return value;
  }

  define(name, value) {
    if (this.entities.has(name)) throw new Error(`entity ${name} already defined`);
    this.entities.set(name, value);
  }

  async create(entities) {
    for (const entity of entities ?? []) {
      const [kind] = Object.keys(entity);
      const spec = entity[kind];
      switch (kind) {
        case 'client': {
          const client = new MongoClient(this.uri, clientOptions(spec));
          const started = [];
          this.commands.set(spec.id, started);
          this.checkedOut.set(spec.id, 0);
          client.on('commandStarted', (e) => started.push(e));
          client.on('connectionCheckedOut', () => this.checkedOut.set(spec.id, this.checkedOut.get(spec.id) + 1));
          client.on('connectionCheckedIn', () => this.checkedOut.set(spec.id, this.checkedOut.get(spec.id) - 1));
          await client.connect();
          this.define(spec.id, client);
          break;
        }
        case 'database':
          this.define(spec.id, this.entity(spec.client, 'client').db(spec.databaseName, collectionOptions(spec.databaseOptions)));
          break;
        case 'collection':
          this.define(spec.id, this.entity(spec.database, 'database').collection(spec.collectionName, collectionOptions(spec.collectionOptions)));
          break;
        case 'session':
          this.define(spec.id, this.entity(spec.client, 'client').startSession(toDriver(spec.sessionOptions ?? {})));
          break;
        case 'bucket':
          this.define(spec.id, newBucket(this.entity(spec.database, 'database'), spec.bucketOptions, this));
          break;
        default:
          throw new Error(`unsupported entity type ${kind}`);
      }
    }
  }

  async close() {
    for (const value of this.entities.values()) {
      const kind = kindOf(value);
      if (kind === 'cursor') await value.close().catch(() => {});
      if (kind === 'session') await value.endSession().catch(() => {});
    }
    for (const value of this.entities.values()) if (kindOf(value) === 'client') await value.close().catch(() => {});
  }

  async runOperations(operations) {
    for (const op of operations ?? []) await this.runOperation(op);
  }

  async runOperation(op) {
    if (op.object === 'testRunner') return this.special(op.name, op.arguments ?? {});
    const target = this.entity(op.object);
    const handler = OPERATIONS[kindOf(target)]?.[op.name];
    if (!handler) throw new Error(`unsupported operation ${op.name} on ${kindOf(target)} ${op.object}`);
    let result;
    let error;
    try {
      result = await handler(target, op.arguments ?? {}, this);
    } catch (err) {
      error = err;
    }
    if (op.ignoreResultAndError) return;
    if (op.expectError) {
      if (!error) fail(`${op.name}: expected an error, got result ${show(result)}`);
      checkError(op.name, op.expectError, error, this);
      return;
    }
    if (error) {
      if (error instanceof AssertionFailure) throw error;
      fail(`${op.name}: unexpected error: ${describeError(error)}`);
    }
    if (op.expectResult !== undefined) {
      const mismatch = match(op.expectResult, result, this, op.name !== 'distinct', op.name);
      if (mismatch) fail(mismatch);
    }
    if (op.saveResultAsEntity) this.define(op.saveResultAsEntity, result);
  }

  async special(name, args) {
    const exists = async (db, coll) => (await this.internal.db(db).listCollections({ name: coll }, { nameOnly: true }).toArray()).length > 0;
    const indexNames = async (db, coll) => (await this.internal.db(db).collection(coll).listIndexes().toArray()).map((ix) => ix.name);
    switch (name) {
      case 'assertCollectionExists':
        if (!(await exists(args.databaseName, args.collectionName))) fail(`collection ${args.collectionName} does not exist`);
        return;
      case 'assertCollectionNotExists':
        if (await exists(args.databaseName, args.collectionName)) fail(`collection ${args.collectionName} exists`);
        return;
      case 'assertIndexExists':
        if (!(await indexNames(args.databaseName, args.collectionName)).includes(args.indexName)) fail(`index ${args.indexName} does not exist`);
        return;
      case 'assertIndexNotExists':
        if ((await indexNames(args.databaseName, args.collectionName).catch(() => [])).includes(args.indexName)) fail(`index ${args.indexName} exists`);
        return;
      case 'createEntities':
        return this.create(args.entities);
      case 'assertNumberConnectionsCheckedOut':
        if (this.checkedOut.get(args.client) !== toOption(args.connections)) fail(`expected ${show(args.connections)} connections checked out, got ${this.checkedOut.get(args.client)}`);
        return;
      case 'assertSameLsidOnLastTwoCommands':
      case 'assertDifferentLsidOnLastTwoCommands': {
        const started = this.commands.get(args.client) ?? [];
        const [a, b] = started.slice(-2).map((e) => e.command.lsid?.id?.toString('hex'));
        if ((a === b) !== (name === 'assertSameLsidOnLastTwoCommands')) fail(`${name}: lsids ${a} and ${b}`);
        return;
      }
      default:
        throw new Error(`unsupported special operation ${name}`);
    }
  }
}

function describeError(err) {
  const e = err;
  return `${e?.constructor?.name ?? 'Error'}${e?.code !== undefined ? ` code ${e.code}` : ''}: ${e?.message ?? String(err)}`;
}

/** Server errors of a bulk write are spread over its write errors: any of them satisfies code and message checks. */
function serverErrors(error) {
  const list = [error];
  if (error instanceof MongoBulkWriteError) for (const we of error.writeErrors ?? []) list.push({ code: we.code, codeName: we.errInfo?.codeName, message: we.errmsg });
  if (error?.writeConcernError) list.push({ code: error.writeConcernError.code, codeName: error.writeConcernError.codeName, message: error.writeConcernError.errmsg });
  return list;
}

function checkError(opName, expected, error, ctx) {
  if (error instanceof AssertionFailure) throw error;
  const isServer = error instanceof MongoServerError;
  const what = `${opName}: ${describeError(error)}`;
  if (expected.isClientError === true && isServer) fail(`${what}: expected a client error`);
  if (expected.isClientError === false && !isServer) fail(`${what}: expected a server error`);
  if (expected.isTimeoutError !== undefined && (error?.name === 'MongoOperationTimeoutError') !== expected.isTimeoutError) fail(`${what}: timeout error expected ${expected.isTimeoutError}`);
  const errors = serverErrors(error);
  if (expected.errorContains !== undefined && !errors.some((e) => String(e.message ?? '').toLowerCase().includes(expected.errorContains.toLowerCase())))
    fail(`${what}: message does not contain "${expected.errorContains}"`);
  if (expected.errorCode !== undefined && !(isServer && errors.some((e) => e.code === toOption(expected.errorCode)))) fail(`${what}: expected code ${show(expected.errorCode)}`);
  if (expected.errorCodeName !== undefined && !errors.some((e) => String(e.codeName ?? '').toLowerCase() === expected.errorCodeName.toLowerCase()))
    fail(`${what}: expected code name ${expected.errorCodeName}`);
  for (const label of expected.errorLabelsContain ?? []) if (!error.hasErrorLabel?.(label)) fail(`${what}: missing error label ${label}`);
  for (const label of expected.errorLabelsOmit ?? []) if (error.hasErrorLabel?.(label)) fail(`${what}: unexpected error label ${label}`);
  if (expected.errorResponse !== undefined) {
    const mismatch = match(expected.errorResponse, error.errorResponse ?? error.result ?? {}, ctx, true, 'errorResponse');
    if (mismatch) fail(`${what}: ${mismatch}`);
  }
  if (expected.expectResult !== undefined) {
    const r = error instanceof MongoBulkWriteError ? error.result : undefined;
    const actual = r && { deletedCount: r.deletedCount, insertedCount: r.insertedCount, insertedIds: r.insertedIds, matchedCount: r.matchedCount, modifiedCount: r.modifiedCount, upsertedCount: r.upsertedCount, upsertedIds: r.upsertedIds };
    const mismatch = match(expected.expectResult, actual, ctx, true, 'error result');
    if (mismatch) fail(`${what}: ${mismatch}`);
  }
}

async function loadInitialData(internal, initialData) {
  for (const data of initialData ?? []) {
    const db = internal.db(data.databaseName);
    await db.dropCollection(data.collectionName, { writeConcern: { w: 'majority' } }).catch(() => {});
    if (data.createOptions) await db.createCollection(data.collectionName, { ...toDriver(data.createOptions), writeConcern: { w: 'majority' } });
    if (data.documents.length) await db.collection(data.collectionName).insertMany(toDriver(data.documents), { writeConcern: { w: 'majority' } });
    else if (!data.createOptions) await db.createCollection(data.collectionName, { writeConcern: { w: 'majority' } });
  }
}

async function checkOutcome(internal, outcome) {
  for (const data of outcome ?? []) {
    const docs = await internal.db(data.databaseName).collection(data.collectionName).find({}, { sort: { _id: 1 }, readPreference: 'primary', readConcern: { level: 'local' } }).toArray();
    const mismatch = matchExactly(data.documents, docs, `${data.collectionName}`);
    if (mismatch) fail(`outcome: ${mismatch}`);
  }
}

/**
 * Runs every test of a parsed file. Each result is { description, status: 'passed' | 'failed' | 'skipped', reason }.
 * `parameters(name)` answers server parameters for requirements.
 */
export async function runFile(file, { uri, internal, parameters, only }) {
  const results = [];
  const fileUnmet = await requirementsUnmet(file.runOnRequirements, parameters);
  for (const test of file.tests) {
    if (only && !only(test)) continue;
    const skip = fileUnmet ?? (test.skipReason ? `skipReason: ${test.skipReason}` : null) ?? (await requirementsUnmet(test.runOnRequirements, parameters)) ?? unrunnable(test);
    if (skip) {
      results.push({ description: test.description, status: 'skipped', reason: skip });
      continue;
    }
    const ctx = new TestContext(uri, internal);
    try {
      await loadInitialData(internal, file.initialData);
      await ctx.create(file.createEntities);
      await ctx.runOperations(test.operations);
      await checkOutcome(internal, test.outcome);
      results.push({ description: test.description, status: 'passed' });
    } catch (err) {
      results.push({ description: test.description, status: 'failed', reason: err instanceof AssertionFailure ? err.message : describeError(err) });
    } finally {
      await ctx.close();
    }
  }
  return results;
}
