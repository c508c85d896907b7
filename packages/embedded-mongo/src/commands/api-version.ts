/**
 * The Stable API (`apiVersion`, `apiStrict`, `apiDeprecationErrors`), as a MongoDB 7.0 server enforces it: only
 * version "1" exists; with `apiStrict: true` a command or aggregation stage outside API version 1 fails with 323
 * APIStrictError. The engine has no deprecated API V1 behaviour, so `apiDeprecationErrors` only needs a version.
 */
import type { Document } from 'bson';
import { isPlainObject } from '../bson-values.js';
import { MongoCommandError } from '../errors.js';

/** Commands of API version 1 (MongoDB 7.0). */
const API_V1 = new Set([
  'abortTransaction', 'aggregate', 'authenticate', 'collMod', 'commitTransaction', 'count', 'create', 'createIndexes', 'delete', 'drop',
  'dropDatabase', 'dropIndexes', 'endSessions', 'explain', 'find', 'findAndModify', 'getMore', 'hello', 'insert', 'killCursors',
  'listCollections', 'listDatabases', 'listIndexes', 'ping', 'refreshSessions', 'update', 'saslStart', 'saslContinue',
]);

/** Aggregation stages outside API version 1. */
const NON_V1_STAGES = new Set(['$currentOp', '$indexStats', '$listLocalSessions', '$listSessions', '$planCacheStats', '$collStats', '$search', '$searchMeta']);

export function checkApiVersion(name: string, body: Document): void {
  const { apiVersion, apiStrict, apiDeprecationErrors } = body;
  if (apiVersion === undefined) {
    if (apiStrict !== undefined) throw new MongoCommandError(4886600, "Provided apiStrict without passing apiVersion");
    if (apiDeprecationErrors !== undefined) throw new MongoCommandError(4886600, 'Provided apiDeprecationErrors without passing apiVersion');
    return;
  }
  if (typeof apiVersion !== 'string') throw new MongoCommandError(14, "BSON field 'apiVersion' is the wrong type, expected type 'string'");
  if (apiVersion !== '1') throw new MongoCommandError(322, `API version must be "1"`);
  if (apiStrict !== true) return;
  if (!API_V1.has(name)) throw new MongoCommandError(323, `Provided apiStrict:true, but the command ${name} is not in API Version 1. Information on supported commands and migrations in API Version 1 can be found at https://dochub.mongodb.org/core/manual-versioned-api`);
  if (name === 'aggregate' && Array.isArray(body.pipeline))
    for (const stage of body.pipeline) {
      const stageName = isPlainObject(stage) ? Object.keys(stage)[0] : undefined;
      if (stageName && NON_V1_STAGES.has(stageName)) throw new MongoCommandError(323, `${stageName} is not allowed with 'apiStrict: true' in API Version 1`);
    }
}
