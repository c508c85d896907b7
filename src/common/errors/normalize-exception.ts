import { HttpException, HttpStatus } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import { duplicateKeyField, isDatabaseUnavailableError, isDuplicateKeyError } from '../../database/mongo-errors.js';
import { TOO_MANY_KEYS } from '../body-shape.js';
import { boundErrorWords } from './error-budget.js';
import { RequestValidationException, type FieldProblem } from './request-validation.exception.js';
import { TypedProblemException } from './typed-problem.exception.js';

/** What both interfaces' error bodies are made from. */
export interface NormalizedError {
  status: number;
  /** The HTTP reason phrase, e.g. "Not Found". */
  title: string;
  /** Human-readable; a list for validation failures, as NestJS answers them. */
  message: string | string[];
  errors?: FieldProblem[];
  /** A problem type of our own (TypedProblemException), with its extension members; else `about:blank`. */
  problem?: { type: string; title: string; extensions: Record<string, unknown> };
  /** True when the cause is ours (5xx): it is logged, and the body says nothing of it but `message`. */
  internal: boolean;
  /** Seconds after which the same request may succeed (the Retry-After header). */
  retryAfterSeconds?: number;
}

/** How long a client should wait before it retries a request the database was unreachable for. */
const DATABASE_RETRY_AFTER_SECONDS = 5;
export const DATABASE_UNAVAILABLE = 'The database is unavailable; try again shortly';

interface HttpErrorLike {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  type?: string;
  message?: string;
}

/** A Mongoose ValidationError (`errors` by path) or CastError (`path`, `kind`). */
interface MongooseErrorLike {
  path?: string;
  kind?: string;
  errors?: Record<string, { path?: string; kind?: string }>;
}

const MONGOOSE_KIND_MESSAGES: Record<string, string> = {
  required: 'is required',
  maxlength: 'is too long',
  minlength: 'is too short',
  max: 'is too large',
  min: 'is too small',
  enum: 'is not one of the allowed values',
};

/**
 * Our own words for each field Mongoose refused: its messages quote the value and the schema's internals
 * ("Cast to ObjectId failed for value ... at path ... for model ..."), so none of its text is returned.
 */
function mongooseFieldProblems(error: MongooseErrorLike): FieldProblem[] {
  const fields = error.errors ? Object.values(error.errors) : [error];
  return fields.map(({ path, kind }) => {
    const field = path ?? 'body';
    return { field, message: `${field} ${MONGOOSE_KIND_MESSAGES[kind ?? ''] ?? 'has an invalid value'}` };
  });
}

const BODY_PARSER_MESSAGES: Record<string, string> = {
  'entity.parse.failed': 'Malformed JSON in the request body',
  'entity.too.large': 'The request body is too large',
  'encoding.unsupported': 'Unsupported content encoding',
  'charset.unsupported': 'Unsupported charset',
  // A form body of more than MAX_BODY_KEYS fields: the parser counts them before parsing.
  'parameters.too.many': TOO_MANY_KEYS,
};

/** The parser answers 413 for too many form fields; the contract's answer to too many keys is 400, as for JSON. */
const BODY_PARSER_STATUSES: Record<string, number> = { 'parameters.too.many': HttpStatus.BAD_REQUEST };

function reason(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

function fromHttpException(exception: HttpException): UnboundedError {
  const response = exception.getResponse();
  // Nest wraps body-parser's errors in an HttpException whose message is the parser's own words.
  const parserType = (exception.cause as HttpErrorLike | undefined)?.type;
  const status = BODY_PARSER_STATUSES[parserType ?? ''] ?? exception.getStatus();
  const message =
    BODY_PARSER_MESSAGES[parserType ?? ''] ??
    (typeof response === 'string'
      ? response
      : ((response as { message?: string | string[] }).message ?? exception.message));
  const typed = exception instanceof TypedProblemException;
  return {
    status,
    title: reason(status),
    message,
    errors: exception instanceof RequestValidationException ? exception.problems : undefined,
    unlisted: exception instanceof RequestValidationException ? exception.unlisted : undefined,
    ...(typed ? { problem: { type: exception.problemType, title: exception.problemTitle, extensions: exception.extensions } } : {}),
    internal: status >= 500,
  };
}

/**
 * Maps anything thrown while handling a request to a status and a safe message: Nest's
 * HttpExceptions as they are, body-parser's errors (malformed JSON 400, too large 413), duplicate
 * keys 409, Mongoose validation and cast errors 400, an unreachable database 503 with Retry-After,
 * and everything else 500 with no details. The
 * words are bounded (boundErrorWords): whatever a request sent, its error body stays under 10 KB.
 */
export function normalizeException(exception: unknown): NormalizedError {
  const { unlisted, ...error } = normalize(exception);
  return { ...error, ...boundErrorWords({ message: error.message, errors: error.errors, unlisted }) };
}

/** A normalized error before its words are bounded, with the count of field problems not even listed. */
type UnboundedError = NormalizedError & { unlisted?: number };

function normalize(exception: unknown): UnboundedError {
  if (exception instanceof HttpException) return fromHttpException(exception);

  const httpError = exception as HttpErrorLike;
  const status = BODY_PARSER_STATUSES[httpError?.type ?? ''] ?? httpError?.status ?? httpError?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500 && httpError.expose !== false) {
    const message = BODY_PARSER_MESSAGES[httpError.type ?? ''] ?? httpError.message ?? reason(status);
    return { status, title: reason(status), message, internal: false };
  }
  if (isDuplicateKeyError(exception)) {
    const field = duplicateKeyField(exception);
    return {
      status: HttpStatus.CONFLICT,
      title: reason(HttpStatus.CONFLICT),
      message: field ? `A record with this ${field} already exists` : 'A record with these values already exists',
      internal: false,
    };
  }
  const name = (exception as Error | undefined)?.name;
  if (name === 'ValidationError' || name === 'CastError') {
    const errors = mongooseFieldProblems(exception as MongooseErrorLike);
    return { status: 400, title: reason(400), message: errors.map((problem) => problem.message), errors, internal: false };
  }
  if (isDatabaseUnavailableError(exception)) {
    // Not the request's fault nor a bug: the same request may be sent again, as readiness says (GET /health 503).
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      title: reason(HttpStatus.SERVICE_UNAVAILABLE),
      message: DATABASE_UNAVAILABLE,
      internal: true,
      retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
    };
  }
  return { status: 500, title: reason(500), message: 'Internal server error', internal: true };
}
