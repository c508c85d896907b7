import { BadRequestException, Injectable, ValidationPipe, type ArgumentMetadata, type PipeTransform, type ValidationError } from '@nestjs/common';
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
