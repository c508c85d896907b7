/** What every command handler receives, and small argument readers shared by the handlers. */
import { Double, type Document } from 'bson';
import { toNumber } from '../bson-values.js';
import type { Authentication } from '../auth/authentication.js';
import { badValue, MongoCommandError, typeMismatch } from '../errors.js';
import { parseCollation, type Collator } from '../query/collation.js';
import { evaluateVariables } from '../query/mingo.js';
import type { Maybe, Work } from '../query/work.js';
import type { Collection } from '../storage/collection.js';
import type { Engine } from '../storage/engine.js';

/** What a command may know of the connection it arrived on. */
export interface ConnectionState {
  readonly id: number;
  /** The largest message this server accepts on a connection (hello's `maxMessageSizeBytes`). */
  readonly maxMessageBytes: number;
  /** Null when the server runs without access control (no `--auth`). */
  readonly auth: Authentication | null;
  /** Whether the client has gone: a command still running then ends at its next turn. */
  isClosed(): boolean;
}

export interface CommandContext {
  engine: Engine;
  /** Database the command runs against (`$db`). */
  db: string;
  body: Document;
  connection: ConnectionState;
  /** The command's deadline (`maxTimeMS`) and turns on the thread (query/work.ts). */
  work: Work;
}

/**
 * A handler returns the reply without `ok` (a promise when the command gave up the thread on the way, see
 * query/work.ts), or throws a MongoCommandError.
 */
export type CommandHandler = (ctx: CommandContext) => Maybe<Document>;

/** `ok: 1` is a double on the wire, as MongoDB sends it. */
export const OK = new Double(1);

/** The collection named by the command's first field (e.g. `{ find: "users" }`). */
export function collectionName(ctx: CommandContext, command: string): string {
  const name = ctx.body[command];
  if (typeof name !== 'string' || !name) throw typeMismatch(`collection name has invalid type ${name === null ? 'null' : typeof name}`);
  return name;
}

/** A non-negative integer option (accepts int32, double and Long), or undefined when absent. */
export function optionalCount(body: Document, field: string): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  const n = toNumber(v);
  if (!Number.isFinite(n) || !Number.isInteger(n)) throw typeMismatch(`Field '${field}' should be an integer, but found: ${String(v)}`);
  if (n < 0) throw badValue(`${field} value must be non-negative, but received: ${n}`);
  return n;
}

export function optionalDocument(body: Document, field: string): Document | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw typeMismatch(`BSON field '${field}' is the wrong type '${Array.isArray(v) ? 'array' : typeof v}', expected type 'object'`);
  return v as Document;
}

/** The collation a read or write uses: its own `collation` option, else the collection's default. */
export function collationFor(options: Document, coll: Collection | undefined): Collator | null {
  if (options.collation !== undefined && options.collation !== null) return parseCollation(options.collation);
  return coll?.collator ?? null;
}

/** The command's `let` variables, evaluated (they are expressions). */
export const letVariables = (body: Document): Document | undefined => evaluateVariables(optionalDocument(body, 'let'));

/** The collection of a write: created on first write, never a view. */
export function writableCollection(ctx: CommandContext, name: string): Collection {
  const existing = ctx.engine.collection(ctx.db, name);
  if (existing?.isView) throw new MongoCommandError(166, `Namespace ${ctx.db}.${name} is a view, not a collection`);
  return existing ?? ctx.engine.db(ctx.db).ensure(name);
}
