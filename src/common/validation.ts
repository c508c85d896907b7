import { BadRequestException, Injectable, ValidationPipe, type ArgumentMetadata, type PipeTransform, type ValidationError } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { BoundedMap } from './bounded-map.js';
import { bodyShapeProblem } from './body-shape.js';
import { MAX_LISTED_PROBLEMS } from './errors/error-budget.js';
import { RequestValidationException } from './errors/request-validation.exception.js';

/** class-validator's errors, carried from the pipe's exception factory to `transform`, which knows the request part. */
class ValidationErrors extends Error {
  constructor(readonly errors: ValidationError[]) {
    super('validation failed');
  }
}

/** Query strings kept validated, per DTO class. */
const CACHED_QUERIES = 500;

/**
 * Unknown fields are refused, values are converted to the DTO's types, every problem is listed, in plain words
 * (RequestValidationException), naming the part of the request a problem is in.
 *
 * It also keeps the DTOs of valid query strings: GET requests repeat (an inbox polls the same page), and converting
 * and validating a query with its many optional fields costs as much as building several of the page's rows. A
 * query object (strings, or arrays of strings, from the URL) converts to the same DTO every time, so the DTO made
 * once is answered again, as a copy (the handler may change its copy). Refused queries are not kept.
 */
class RequestValidationPipe extends ValidationPipe {
  private readonly validated = new WeakMap<object, BoundedMap<string, object>>();

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
    const metatype = metadata.metatype;
    if (metadata.type !== 'query' || !metatype || !isFlatQuery(value)) return this.convert(value, metadata);
    let cache = this.validated.get(metatype);
    if (!cache) this.validated.set(metatype, (cache = new BoundedMap(CACHED_QUERIES)));
    const key = JSON.stringify(value);
    let dto = cache.get(key);
    if (!dto) {
      dto = (await this.convert(value, metadata)) as object;
      cache.set(key, dto);
    }
    return copyOf(dto);
  }

  private async convert(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    try {
      return await super.transform(value, metadata);
    } catch (error) {
      if (!(error instanceof ValidationErrors)) throw error;
      throw RequestValidationException.fromValidationErrors(error.errors, metadata.type === 'query' ? 'query' : 'body');
    }
  }
}

/** A query object as Express parses a URL's query string: strings, and arrays of strings for repeated names. */
function isFlatQuery(value: unknown): value is Record<string, string | string[]> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  return Object.values(value).every((v) => typeof v === 'string' || (Array.isArray(v) && v.every((item) => typeof item === 'string')));
}

function copyOf<T extends object>(dto: T): T {
  const copy = Object.create(Object.getPrototypeOf(dto) as object | null) as Record<string, unknown>;
  for (const [key, v] of Object.entries(dto)) copy[key] = Array.isArray(v) ? [...v] : v;
  return copy as T;
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
