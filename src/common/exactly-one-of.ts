import { RequestValidationException } from './errors/request-validation.exception.js';

/**
 * The one of `fields` that `body` gives; 400 naming them when it gives none or several. For bodies that take one of
 * several modes (a message as text or as a template), which per-field validation cannot express.
 */
export function exactlyOneOf<T extends object, K extends keyof T & string>(body: T, fields: readonly K[]): K {
  const given = fields.filter((field) => body[field] !== undefined);
  if (given.length === 1) return given[0];
  const message = `exactly one of ${fields.join(', ')} is required` + (given.length > 1 ? `, not ${given.join(' and ')} together` : '');
  throw new RequestValidationException((given.length === 0 ? fields : given).map((field) => ({ field, message })));
}
