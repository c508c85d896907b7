import { BadRequestException, Injectable, ValidationPipe, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { BoundedMap } from './bounded-map.js';
import { RequestValidationException } from './errors/request-validation.exception.js';

/** Query strings kept validated, per DTO class. */
const CACHED_QUERIES = 500;

/**
 * The global ValidationPipe, which also keeps the DTOs of valid query strings: GET requests repeat (an inbox polls the
 * same page), and converting and validating a query with its many optional fields costs as much as building several
 * of the page's rows. A query object (strings, or arrays of strings, from the URL) converts to the same DTO every
 * time, so the DTO made once is answered again, as a copy (the handler may change its copy). Refused queries are
 * not kept: they are validated each time.
 */
class QueryCachingValidationPipe extends ValidationPipe {
  private readonly validated = new WeakMap<object, BoundedMap<string, object>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype = metadata.metatype;
    if (metadata.type !== 'query' || !metatype || !isFlatQuery(value)) return super.transform(value, metadata);
    let cache = this.validated.get(metatype);
    if (!cache) this.validated.set(metatype, (cache = new BoundedMap(CACHED_QUERIES)));
    const key = JSON.stringify(value);
    let dto = cache.get(key);
    if (!dto) {
      dto = (await super.transform(value, metadata)) as object;
      cache.set(key, dto);
    }
    return copyOf(dto);
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

/** Unknown fields are refused, values are converted to the DTO's types, every problem is listed. */
export function createValidationPipe(): ValidationPipe {
  return new QueryCachingValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => RequestValidationException.fromValidationErrors(errors),
  });
}

/** Deeper than any request of the API needs, far shallower than what overflows class-transformer's recursion. */
const MAX_DEPTH = 32;

/** Keys class-transformer drops without a word (its guard against prototype pollution): refused like unknown fields. */
const DROPPED_KEYS = new Set(['__proto__', 'constructor']);

function findRefusedKey(value: unknown, depth = 0): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (depth > MAX_DEPTH) throw new BadRequestException(`Values may not be nested more than ${MAX_DEPTH} levels deep`);
  for (const [key, nested] of Object.entries(value)) {
    if (key.startsWith('$') || DROPPED_KEYS.has(key)) return key;
    const found = findRefusedKey(nested, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * Refuses `$`-prefixed keys anywhere in a body or query (`{"$gt": ""}`, `status[$ne]=x`) before any
 * DTO sees them, including inside free-form objects such as contact attributes, which would
 * otherwise reach MongoDB filters and updates unchecked; `__proto__` and `constructor` keys, which
 * would vanish silently; and values nested deeper than MAX_DEPTH.
 */
@Injectable()
export class RejectOperatorKeysPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body' && metadata.type !== 'query') return value;
    const key = findRefusedKey(value);
    if (key?.startsWith('$')) throw new BadRequestException(`Field names starting with "$" are not allowed (found "${key}")`);
    if (key) throw new BadRequestException(`Field name "${key}" is not allowed`);
    return value;
  }
}
