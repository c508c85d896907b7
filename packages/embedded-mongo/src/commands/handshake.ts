/**
 * Handshake and session commands. The server presents itself as a standalone MongoDB 7.0 (wire version 21) with
 * no compressors. Sessions (`lsid`) are accepted; transactions are refused as a standalone mongod refuses them (see
 * `refuseTransactions`). With access control, `hello` answers the mechanisms a user may use and runs the first
 * SCRAM step the driver sends along (`speculativeAuthenticate`); `saslStart`/`saslContinue` run the conversation.
 */
import type { Document } from 'bson';
import { MECHANISM } from '../auth/authentication.js';
import { MongoCommandError } from '../errors.js';
import { MAX_BSON_SIZE } from '../wire-protocol.js';
import type { CommandContext, CommandHandler } from './context.js';

export const MAX_WIRE_VERSION = 21;
export const MAX_WRITE_BATCH_SIZE = 100_000;

/** The first step of the authentication the driver sends inside hello; omitted from the reply if it fails. */
function speculativeAuthentication(ctx: CommandContext): Document {
  const auth = ctx.connection.auth;
  const request = ctx.body.speculativeAuthenticate as Document | undefined;
  if (!auth || !request || request.saslStart !== 1) return {};
  try {
    const db = typeof request.db === 'string' ? request.db : ctx.db;
    return { speculativeAuthenticate: auth.saslStart(db, request) };
  } catch {
    return {}; // the driver then authenticates with saslStart, which reports the failure
  }
}

/** Room for the command around the documents of a batch, as MongoDB allows (BSONObjMaxInternalSize). */
const COMMAND_OVERHEAD = 16 * 1024;

export function helloReply(ctx: CommandContext, legacyName: boolean): Document {
  return {
    ...(ctx.body.helloOk === true ? { helloOk: true } : {}),
    ...(legacyName ? { ismaster: true } : { isWritablePrimary: true }),
    // Drivers size write batches by maxBsonObjectSize: under a smaller per-connection limit their batches must shrink too.
    maxBsonObjectSize: Math.min(MAX_BSON_SIZE, ctx.connection.maxMessageBytes - COMMAND_OVERHEAD),
    maxMessageSizeBytes: ctx.connection.maxMessageBytes,
    maxWriteBatchSize: MAX_WRITE_BATCH_SIZE,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: ctx.connection.id,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ...(ctx.connection.auth && typeof ctx.body.saslSupportedMechs === 'string' ? { saslSupportedMechs: [MECHANISM] } : {}),
    ...speculativeAuthentication(ctx),
  };
}

/**
 * A standalone mongod has no transactions: any command carrying a transaction number (`startTransaction`, the
 * operations of a transaction, `commitTransaction`, `abortTransaction`) fails with its error, so no code can rely
 * on a rollback that would not happen. Drivers send no transaction number to a standalone otherwise (no retryable
 * writes), so this refuses exactly the transactions.
 */
export function refuseTransactions(body: Document): void {
  if (body.txnNumber !== undefined || body.startTransaction !== undefined) throw noTransactions();
}

const noTransactions = () => new MongoCommandError(20, 'Transaction numbers are only allowed on a replica set member or mongos');

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

const noAccessControl = () => new MongoCommandError(18, 'Authentication failed: this server runs without --auth and has no users');

const refuseTransaction: CommandHandler = () => {
  throw noTransactions();
};

export const handshakeCommands: Record<string, CommandHandler> = {
  hello: (ctx) => helloReply(ctx, false),
  isMaster: (ctx) => helloReply(ctx, true),
  ismaster: (ctx) => helloReply(ctx, true),
  ping: acknowledge,
  buildInfo,
  buildinfo: buildInfo,
  commitTransaction: refuseTransaction,
  abortTransaction: refuseTransaction,
  saslStart: (ctx) => {
    if (!ctx.connection.auth) throw noAccessControl();
    return ctx.connection.auth.saslStart(ctx.db, ctx.body);
  },
  saslContinue: (ctx) => {
    if (!ctx.connection.auth) throw noAccessControl();
    return ctx.connection.auth.saslContinue(ctx.body);
  },
};

/** What a client may run before it has authenticated (the handshake, as mongod allows). */
export const OPEN_COMMANDS = new Set(['hello', 'isMaster', 'ismaster', 'ping', 'buildInfo', 'buildinfo', 'saslStart', 'saslContinue']);
