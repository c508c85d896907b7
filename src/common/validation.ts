import { BadRequestException, Injectable, ValidationPipe, type ArgumentMetadata, type PipeTransform, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { bodyShapeProblem } from './body-shape.js';
import { MAX_LISTED_PROBLEMS } from './errors/error-budget.js';
import { RequestValidationException } from './errors/request-validation.exception.js';

/** class-validator's errors, carried from the pipe's exception factory to `transform`, which knows the request part. */
class ValidationErrors extends Error {
  constructor(readonly errors: ValidationError[]) {
    super('validation failed');
  }
}

/**
 * Unknown fields are refused, values are converted to the DTO's types, every problem is listed, in plain words
 * (RequestValidationException), naming the part of the request a problem is in.
 */
class RequestValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new ValidationErrors(errors),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (!(error instanceof ValidationErrors)) throw error;
      throw RequestValidationException.fromValidationErrors(error.errors, metadata.type === 'query' ? 'query' : 'body');
    }
  }
}

export function createValidationPipe(): ValidationPipe {
  return new RequestValidationPipe();
}

/** Keys class-transformer drops without a word (its guard against prototype pollution): refused like unknown fields. */
const DROPPED_KEYS = new Set(['__proto__', 'constructor']);

/** The first refused key in `value`; its depth is bounded (bodies by bodyShapeProblem, queries are flat). */
function findRefusedKey(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, nested] of Object.entries(value)) {
    if (key.startsWith('$') || DROPPED_KEYS.has(key)) return key;
    const found = findRefusedKey(nested);
    if (found) return found;
  }
  return undefined;
}

/** The fields a DTO class declares (those with a validation decorator: what class-validator's whitelist lets through). */
const declaredFields = new WeakMap<object, ReadonlySet<string> | null>();

function fieldsOf(metatype: ArgumentMetadata['metatype']): ReadonlySet<string> | null {
  if (typeof metatype !== 'function') return null;
  let fields = declaredFields.get(metatype);
  if (fields === undefined) {
    const metadatas = getMetadataStorage().getTargetValidationMetadatas(metatype, '', false, false);
    fields = metadatas.length > 0 ? new Set(metadatas.map((metadata) => metadata.propertyName)) : null;
    declaredFields.set(metatype, fields);
  }
  return fields;
}

/**
 * A body with more unknown top-level fields than an error lists, refused the way the validation pipe would
 * refuse it ("<field> is not a field of this body", the first MAX_LISTED_PROBLEMS listed and the rest counted), without
 * class-transformer and class-validator building an instance and an error per field first: a thousand unknown
 * fields cost them tens of milliseconds, a lookup each here.
 */
function refuseManyUnknownFields(body: unknown, metatype: ArgumentMetadata['metatype']): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const fields = fieldsOf(metatype);
  if (fields === null) return;
  const unknown = Object.keys(body).filter((key) => !fields.has(key));
  if (unknown.length <= MAX_LISTED_PROBLEMS) return;
  const listed = unknown.slice(0, MAX_LISTED_PROBLEMS).map((field) => ({ field, message: `${field} is not a field of this body` }));
  throw new RequestValidationException(listed, unknown.length - listed.length);
}

/**
 * Refuses `$`-prefixed keys anywhere in a body or query (`{"$gt": ""}`, `status[$ne]=x`) before any
 * DTO sees them, including inside free-form objects such as contact attributes, which would
 * otherwise reach MongoDB filters and updates unchecked; `__proto__` and `constructor` keys, which
 * would vanish silently; bodies with too many keys or nested too deep (bodyShapeProblem): the JSON and
 * form parsers have refused those already, this refuses the multipart fields a file interceptor parsed
 * since; and bodies of many unknown fields (refuseManyUnknownFields), before the validation pipe.
 */
@Injectable()
export class RejectOperatorKeysPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body' && metadata.type !== 'query') return value;
    const shape = metadata.type === 'body' ? bodyShapeProblem(value) : null;
    if (shape) throw new BadRequestException(shape);
    const key = findRefusedKey(value);
    if (key?.startsWith('$')) throw new BadRequestException(`Field names starting with "$" are not allowed (found "${key}")`);
    if (key) throw new BadRequestException(`Field name "${key}" is not allowed`);
    if (metadata.type === 'body') refuseManyUnknownFields(value, metadata.metatype);
    return value;
  }
}
