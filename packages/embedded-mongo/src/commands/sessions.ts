/**
 * Logical sessions the server has seen (the `lsid` of commands), for `$listLocalSessions`; `endSessions` forgets
 * them. Sessions carry no state here: operations apply immediately (see README, Sessions and transactions).
 */
import { Binary, type Document } from 'bson';
import { createHash } from 'node:crypto';
import type { Engine } from '../storage/engine.js';

interface SessionRecord {
  id: unknown;
  lastUse: Date;
}

const registries = new WeakMap<Engine, Map<string, SessionRecord>>();

const registry = (engine: Engine) => {
  let r = registries.get(engine);
  if (!r) registries.set(engine, (r = new Map()));
  return r;
};

const keyOf = (id: unknown) => ((id as { toString?: (enc: string) => string })?.toString?.('hex') ?? String(id));

/** Notes the session of a command (its `lsid`), if any. */
export function touchSession(engine: Engine, lsid: unknown): void {
  const id = (lsid as Document | undefined)?.id;
  if (id !== undefined) registry(engine).set(keyOf(id), { id, lastUse: new Date() });
}

export function endSessions(engine: Engine, ids: unknown): void {
  if (Array.isArray(ids)) for (const s of ids) registry(engine).delete(keyOf((s as Document)?.id));
}

/** Without authentication every session belongs to the empty user; its uid is the SHA-256 of the user name. */
const EMPTY_USER_UID = new Binary(createHash('sha256').update('').digest(), 0);

/** The documents `$listLocalSessions` starts from. */
export const localSessions = (engine: Engine): Document[] => [...registry(engine).values()].map((s) => ({ _id: { id: s.id, uid: EMPTY_USER_UID }, lastUse: s.lastUse }));
