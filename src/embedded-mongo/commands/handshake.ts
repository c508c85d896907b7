/**
 * Handshake and session commands. The server presents itself as a standalone MongoDB 7.0 (wire version 21) with
 * no compressors; sessions and transactions are accepted with single-node semantics: operations apply as they
 * arrive, `commitTransaction` and `abortTransaction` simply answer ok (abort does not undo writes).
 */
import type { Document } from 'bson';
import { MAX_BSON_SIZE, MAX_MESSAGE_SIZE } from '../wire-protocol.js';
import type { CommandContext, CommandHandler } from './context.js';

export const MAX_WIRE_VERSION = 21;
export const MAX_WRITE_BATCH_SIZE = 100_000;

export function helloReply(ctx: CommandContext, legacyName: boolean): Document {
  return {
    ...(ctx.body.helloOk === true ? { helloOk: true } : {}),
    ...(legacyName ? { ismaster: true } : { isWritablePrimary: true }),
    maxBsonObjectSize: MAX_BSON_SIZE,
    maxMessageSizeBytes: MAX_MESSAGE_SIZE,
    maxWriteBatchSize: MAX_WRITE_BATCH_SIZE,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: ctx.connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
  };
}

const buildInfo: CommandHandler = () => ({
  version: '7.0.0',
  gitVersion: 'embedded',
  versionArray: [7, 0, 0, 0],
  bits: 64,
  debug: false,
  maxBsonObjectSize: MAX_BSON_SIZE,
  storageEngines: ['inMemory'],
  javascriptEngine: 'none',
  modules: [],
});

const acknowledge: CommandHandler = () => ({});

export const handshakeCommands: Record<string, CommandHandler> = {
  hello: (ctx) => helloReply(ctx, false),
  isMaster: (ctx) => helloReply(ctx, true),
  ismaster: (ctx) => helloReply(ctx, true),
  ping: acknowledge,
  buildInfo,
  buildinfo: buildInfo,
  commitTransaction: acknowledge,
  abortTransaction: acknowledge,
};
