/**
 * Command dispatch: the contract's command set; anything else is MongoDB's CommandNotFound (59). Before a handler runs,
 * everything in the body but stored data becomes plain numbers (query/doubles.ts), the Stable API parameters are
 * checked, `maxTimeMS` becomes a deadline and the command's session is noted.
 */
import type { Document } from 'bson';
import { toNumber } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import { commandValues } from '../query/doubles.js';
import { Work, type Maybe } from '../query/work.js';
import type { Engine } from '../storage/engine.js';
import { aggregateCommands } from './aggregate.js';
import { checkApiVersion } from './api-version.js';
import { OK, type CommandHandler, type ConnectionState } from './context.js';
import { explainBody, explainCommands } from './explain.js';
import { findAndModifyCommands } from './find-and-modify.js';
import { handshakeCommands, OPEN_COMMANDS, refuseTransactions } from './handshake.js';
import { indexCommands } from './indexes.js';
import { namespaceCommands } from './namespaces.js';
import { readCommands } from './read.js';
import { countOperation, serverStatusCommands } from './server-status.js';
import { endSessions, touchSession } from './sessions.js';
import { writeCommands } from './write.js';

const COMMANDS = new Map<string, CommandHandler>(
  Object.entries({
    ...handshakeCommands,
    ...readCommands,
    ...writeCommands,
    ...findAndModifyCommands,
    ...aggregateCommands,
    ...indexCommands,
    ...namespaceCommands,
    ...explainCommands,
    ...serverStatusCommands,
    // `{ aggregate, explain: true }` is the other way drivers ask for an aggregation plan.
    aggregate: (ctx) => (ctx.body.explain === true ? explainBody(ctx, { ...ctx.body, explain: undefined }) : aggregateCommands.aggregate(ctx)),
    endSessions: (ctx) => {
      endSessions(ctx.engine, ctx.body.endSessions);
      return {};
    },
  } satisfies Record<string, CommandHandler>),
);

/** The deadline `maxTimeMS` sets (0 or absent: none). */
function deadlineOf(body: Document): number | undefined {
  if (body.maxTimeMS === undefined || body.maxTimeMS === null) return undefined;
  const ms = toNumber(body.maxTimeMS);
  if (!Number.isInteger(ms) || ms < 0) throw badValue(`${String(body.maxTimeMS)} value for maxTimeMS is out of range`);
  return ms === 0 ? undefined : Date.now() + ms;
}

/**
 * Runs one command; the reply is a promise when the command gave up the thread on the way (query/work.ts), so that
 * other connections' commands ran meanwhile.
 */
export function runCommand(engine: Engine, db: string, body: Document, connection: ConnectionState, log: (line: string) => void): Maybe<Document> {
  const name = Object.keys(body)[0] ?? '';
  if (connection.auth && connection.auth.user === null && !OPEN_COMMANDS.has(name))
    return new MongoCommandError(13, `Command ${name} requires authentication`).toReply();
  const handler = COMMANDS.get(name);
  if (!handler) return new MongoCommandError(59, `no such command: '${name}'`).toReply();
  const failed = (err: unknown): Document => {
    if (err instanceof MongoCommandError) return err.toReply();
    // A bug in the engine: answer this command with an error and keep serving.
    log(`embedded-mongo: internal error in '${name}': ${(err as Error)?.stack ?? String(err)}`);
    return new MongoCommandError(1, `internal error in '${name}': ${(err as Error)?.message ?? String(err)}`).toReply();
  };
  const answered = (reply: Document): Document => ({ ...reply, ok: OK });
  try {
    refuseTransactions(body);
    commandValues(name, body);
    checkApiVersion(name, body);
    touchSession(engine, body.lsid);
    countOperation(engine, name, body);
    const reply = handler({ engine, db, body, connection, work: new Work(deadlineOf(body), () => connection.isClosed(), engine.workLimits) });
    return reply instanceof Promise ? reply.then(answered, failed) : answered(reply);
  } catch (err) {
    return failed(err);
  }
}
