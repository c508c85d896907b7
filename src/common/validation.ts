import { BadRequestException, Injectable, ValidationPipe, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { bodyShapeProblem } from './body-shape.js';
import { RequestValidationException } from './errors/request-validation.exception.js';

/** Unknown fields are refused, values are converted to the DTO's types, every problem is listed. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => RequestValidationException.fromValidationErrors(errors),
  });
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

/**
 * Refuses `$`-prefixed keys anywhere in a body or query (`{"$gt": ""}`, `status[$ne]=x`) before any
 * DTO sees them, including inside free-form objects such as contact attributes, which would
 * otherwise reach MongoDB filters and updates unchecked; `__proto__` and `constructor` keys, which
 * would vanish silently; and bodies with too many keys or nested too deep (bodyShapeProblem): the
 * body-shape middleware has refused those of JSON and form bodies already, this refuses the multipart
 * fields a file interceptor parsed since.
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
    return value;
  }
}
