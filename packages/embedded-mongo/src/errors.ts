/**
 * MongoDB-shaped errors. Every failure a client can see is a `MongoCommandError` carrying the numeric `code` and
 * `codeName` MongoDB would send, so drivers and Mongoose classify them exactly as they would with a real server.
 */
import type { Document } from 'bson';

const CODE_NAMES: Record<number, string> = {
  1: 'InternalError',
  2: 'BadValue',
  9: 'FailedToParse',
  13: 'Unauthorized',
  14: 'TypeMismatch',
  17: 'ProtocolError',
  18: 'AuthenticationFailed',
  20: 'IllegalOperation',
  26: 'NamespaceNotFound',
  27: 'IndexNotFound',
  28: 'PathNotViable',
  40: 'ConflictingUpdateOperators',
  43: 'CursorNotFound',
  48: 'NamespaceExists',
  50: 'MaxTimeMSExpired',
  52: 'DollarPrefixedFieldName',
  59: 'CommandNotFound',
  66: 'ImmutableField',
  67: 'CannotCreateIndex',
  72: 'InvalidOptions',
  73: 'InvalidNamespace',
  85: 'IndexOptionsConflict',
  86: 'IndexKeySpecsConflict',
  115: 'CommandNotSupported',
  121: 'DocumentValidationFailure',
  136: 'CappedPositionLost',
  146: 'ExceededMemoryLimit',
  165: 'ViewDepthLimitExceeded',
  166: 'CommandNotSupportedOnView',
  167: 'OptionNotSupportedOnView',
  168: 'InvalidPipelineOperator',
  322: 'APIVersionError',
  323: 'APIStrictError',
  324: 'APIDeprecationError',
  334: 'MechanismUnavailable',
  359: 'CannotConvertIndexToUnique',
  365: 'TemporarilyUnavailable',
  10334: 'BSONObjectTooLarge',
  11000: 'DuplicateKey',
};

export class MongoCommandError extends Error {
  readonly codeName: string;

  constructor(
    readonly code: number,
    message: string,
    /** Extra fields MongoDB adds to this error (e.g. `keyPattern`/`keyValue` for duplicate keys). */
    readonly extra: Document = {},
  ) {
    super(message);
    this.codeName = CODE_NAMES[code] ?? `Location${code}`;
  }

  toReply(): Document {
    return { ok: 0, errmsg: this.message, code: this.code, codeName: this.codeName, ...this.extra };
  }
}

export const badValue = (message: string) => new MongoCommandError(2, message);
export const failedToParse = (message: string) => new MongoCommandError(9, message);
export const typeMismatch = (message: string) => new MongoCommandError(14, message);
export const notSupported = (message: string) => new MongoCommandError(115, message);

/**
 * mingo reports unknown operators and bad arguments with plain `MingoError`s. They are translated to the codes
 * MongoDB uses for the same mistakes; anything unrecognised stays an error (BadValue) rather than being swallowed.
 */
export function fromMingoError(err: unknown): MongoCommandError {
  if (err instanceof MongoCommandError) return err;
  const message = err instanceof Error ? err.message : String(err);
  let m: RegExpMatchArray | null;
  if ((m = message.match(/unknown query operator (\$\w+)/))) return badValue(`unknown operator: ${m[1]}`);
  if ((m = message.match(/unknown top level operator: (\$\w+)/))) return badValue(`unknown top level operator: ${m[1]}`);
  if ((m = message.match(/unregistered pipeline operator (\$\w+)/)))
    return new MongoCommandError(40324, `Unrecognized pipeline stage name: '${m[1]}'`);
  // mingo looks an unknown expression operator up as an accumulator last, hence the wording of its message.
  if ((m = message.match(/accumulator '(\$\w+)' is not registered/)))
    return new MongoCommandError(168, `Unrecognized expression '${m[1]}'`);
  if (/would modify the immutable field/.test(message)) return new MongoCommandError(66, message.replace(/\.$/, ''));
  if ((m = message.match(/updating the path '(.*)' would create a conflict at '(.*)'/)))
    return new MongoCommandError(40, `Updating the path '${m[1]}' would create a conflict at '${m[2]}'`);
  if ((m = message.match(/(\$\w+) (?:operator )?requires 'scriptEnabled'/)))
    return notSupported(`${m[1]} runs JavaScript, which the embedded engine does not support`);
  if ((m = message.match(/Use of undefined variable: (\S+)/))) return new MongoCommandError(17276, `Use of undefined variable: ${m[1]}`);
  if ((m = message.match(/Unknown update operator: '(\$\w+)'/)))
    return failedToParse(`Unknown modifier: ${m[1]}. Expected a valid update modifier or pipeline-style update specified as an array`);
  return badValue(message);
}
