/** Command dispatch: the contract's command set; anything else is MongoDB's CommandNotFound (59). */
import type { Document } from 'bson';
import { MongoCommandError } from '../errors.js';
import type { Engine } from '../storage/engine.js';
import { aggregateCommands } from './aggregate.js';
import { OK, type CommandHandler } from './context.js';
import { explainBody, explainCommands } from './explain.js';
import { findAndModifyCommands } from './find-and-modify.js';
import { handshakeCommands } from './handshake.js';
import { indexCommands } from './indexes.js';
import { namespaceCommands } from './namespaces.js';
import { readCommands } from './read.js';
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
    // `{ aggregate, explain: true }` is the other way drivers ask for an aggregation plan.
    aggregate: (ctx) => (ctx.body.explain === true ? explainBody(ctx, { ...ctx.body, explain: undefined }) : aggregateCommands.aggregate(ctx)),
  } satisfies Record<string, CommandHandler>),
);

export function runCommand(engine: Engine, db: string, body: Document, connectionId: number, log: (line: string) => void): Document {
  const name = Object.keys(body)[0] ?? '';
  const handler = COMMANDS.get(name);
  if (!handler) return new MongoCommandError(59, `no such command: '${name}'`).toReply();
  try {
    return { ...handler({ engine, db, body, connectionId }), ok: OK };
  } catch (err) {
    if (err instanceof MongoCommandError) return err.toReply();
    // A bug in the engine: answer this command with an error and keep serving.
    log(`embedded-mongo: internal error in '${name}': ${(err as Error)?.stack ?? String(err)}`);
    return new MongoCommandError(1, `internal error in '${name}': ${(err as Error)?.message ?? String(err)}`).toReply();
  }
}
