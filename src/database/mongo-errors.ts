export const DUPLICATE_KEY = 11000;

export interface DuplicateKeyError {
  code: typeof DUPLICATE_KEY;
  keyPattern?: Record<string, unknown>;
  keyValue?: Record<string, unknown>;
}

/** True for MongoDB's E11000 duplicate key error, as raised by the driver or Mongoose. */
export function isDuplicateKeyError(error: unknown): error is DuplicateKeyError {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === DUPLICATE_KEY;
}

/** The first field of the violated unique index, e.g. "email" for { companyId: 1, email: 1 }. */
export function duplicateKeyField(error: DuplicateKeyError): string | undefined {
  const fields = Object.keys(error.keyPattern ?? error.keyValue ?? {});
  return fields.find((field) => field !== 'companyId') ?? fields[0];
}

/**
 * The name of the violated unique index, as the server's message says it ("... index: <name> dup key: ..."): the
 * one detail an insert's error keeps (the driver drops `keyPattern` from an insert's write errors).
 */
export function duplicateKeyIndex(error: DuplicateKeyError): string | undefined {
  const { errmsg, message, writeErrors } = error as { errmsg?: string; message?: string; writeErrors?: { errmsg?: string }[] };
  const text = [errmsg, message, writeErrors?.[0]?.errmsg].filter(Boolean).join('\n');
  return /index: (\S+) dup key/.exec(text)?.[1];
}

/**
 * The positions an unordered insert of `count` documents refused as duplicate keys (the others were written),
 * or null when it failed for any other reason.
 */
export function duplicateInsertIndexes(error: unknown, count: number): Set<number> | null {
  const writeErrors = (error as { writeErrors?: { index: number; code?: number; err?: { code?: number } }[] }).writeErrors;
  if (!Array.isArray(writeErrors) || writeErrors.length === 0) {
    return isDuplicateKeyError(error) && count === 1 ? new Set([0]) : null;
  }
  if (writeErrors.some((writeError) => (writeError.code ?? writeError.err?.code) !== DUPLICATE_KEY)) return null;
  return new Set(writeErrors.map((writeError) => writeError.index));
}

/** The driver's and Mongoose's errors for a database it cannot reach now (the error's `name`, stable across copies). */
const UNREACHABLE_ERRORS = new Set([
  'MongoServerSelectionError',
  'MongooseServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoPoolClearedError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
]);

/**
 * True when the database could not be reached: no server to select, a connection lost or refused, or a Mongoose
 * command that waited for a connection in vain. The request may succeed as it is once the database is back.
 */
export function isDatabaseUnavailableError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, message } = error as { name?: unknown; message?: unknown };
  if (typeof name === 'string' && UNREACHABLE_ERRORS.has(name)) return true;
  return name === 'MongooseError' && typeof message === 'string' && message.includes('buffering timed out');
}
