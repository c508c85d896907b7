/**
 * Server introspection: `serverStatus` (host, version, uptime, connections, operation counters, storage engine) and
 * `getParameter` for the parameters drivers and test suites ask about.
 */
import type { Document } from 'bson';
import { hostname } from 'node:os';
import { MongoCommandError } from '../errors.js';
import type { Engine } from '../storage/engine.js';
import type { CommandHandler } from './context.js';

interface ServerCounters {
  started: number;
  connections: { current: number; totalCreated: number; limit: number };
  opcounters: { insert: number; query: number; update: number; delete: number; getmore: number; command: number };
}

const counters = new WeakMap<Engine, ServerCounters>();

function countersOf(engine: Engine): ServerCounters {
  let c = counters.get(engine);
  if (!c) {
    c = { started: Date.now(), connections: { current: 0, totalCreated: 0, limit: 0 }, opcounters: { insert: 0, query: 0, update: 0, delete: 0, getmore: 0, command: 0 } };
    counters.set(engine, c);
  }
  return c;
}

/** Called by the server as connections open (`limit`: how many it allows) and close. */
export function connectionOpened(engine: Engine, limit: number): void {
  const c = countersOf(engine).connections;
  c.current++;
  c.totalCreated++;
  c.limit = limit;
}

export function connectionClosed(engine: Engine): void {
  countersOf(engine).connections.current--;
}

/** Counts a command as serverStatus's opcounters do (per statement for writes). */
export function countOperation(engine: Engine, name: string, body: Document): void {
  const ops = countersOf(engine).opcounters;
  const statements = (field: string) => (Array.isArray(body[field]) ? body[field].length : 1);
  if (name === 'insert') ops.insert += statements('documents');
  else if (name === 'update') ops.update += statements('updates');
  else if (name === 'delete') ops.delete += statements('deletes');
  else if (name === 'find') ops.query++;
  else if (name === 'getMore') ops.getmore++;
  else ops.command++;
}

const serverStatus: CommandHandler = (ctx) => {
  const c = countersOf(ctx.engine);
  const uptimeMillis = Date.now() - c.started;
  const memory = process.memoryUsage();
  return {
    host: hostname(),
    version: '7.0.0',
    process: 'mongod',
    pid: process.pid,
    uptime: Math.floor(uptimeMillis / 1000),
    uptimeMillis,
    uptimeEstimate: Math.floor(uptimeMillis / 1000),
    localTime: new Date(),
    connections: { current: c.connections.current, available: c.connections.limit - c.connections.current, totalCreated: c.connections.totalCreated, active: 1 },
    opcounters: { ...c.opcounters },
    mem: { bits: 64, resident: Math.round(memory.rss / 2 ** 20), virtual: Math.round(memory.rss / 2 ** 20), supported: true },
    storageEngine: ctx.engine.changeLog
      ? { name: 'journal', supportsCommittedReads: false, persistent: true, readOnly: false }
      : { name: 'inMemory', supportsCommittedReads: false, persistent: false, readOnly: false },
    transactions: { currentActive: 0, currentInactive: 0, currentOpen: 0, totalAborted: 0, totalCommitted: 0, totalStarted: 0 },
  };
};

/** The server parameters the engine reports (others answer InvalidOptions, like an unknown MongoDB parameter). */
const PARAMETERS: Document = {
  featureCompatibilityVersion: { version: '7.0' },
  requireApiVersion: false,
  authenticationMechanisms: [],
  maxBSONDepth: 200,
  notablescan: false,
  ttlMonitorEnabled: true,
  transactionLifetimeLimitSeconds: 60,
};

const getParameter: CommandHandler = (ctx) => {
  const body = ctx.body;
  if (body.getParameter === '*') return { ...PARAMETERS };
  const wanted = Object.keys(body).filter((k) => k !== 'getParameter' && !k.startsWith('$') && !['lsid', 'comment', 'apiVersion', 'apiStrict', 'apiDeprecationErrors'].includes(k));
  const out: Document = {};
  for (const k of wanted) if (k in PARAMETERS) out[k] = PARAMETERS[k];
  if (Object.keys(out).length === 0) throw new MongoCommandError(72, 'no option found to get');
  return out;
};

export const serverStatusCommands: Record<string, CommandHandler> = { serverStatus, getParameter };
