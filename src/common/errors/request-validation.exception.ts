import { BadRequestException, type ValidationError } from '@nestjs/common';
import { MAX_LISTED_PROBLEMS } from './error-budget.js';

export interface FieldProblem {
  field: string;
  message: string;
}

/** Where the validated value came from: an unknown name is "not a field of this body" or "not a parameter of this query". */
export type ValidatedPart = 'body' | 'query';

/**
 * A 400 that lists field problems, built from class-validator's errors by the global ValidationPipe. At most
 * MAX_LISTED_PROBLEMS are listed (an error body says only that many, error-budget.ts); `unlisted` counts the
 * rest, which are never worded: a body of a thousand unknown keys named with a kilobyte each would otherwise
 * cost a megabyte of messages to throw away.
 */
export class RequestValidationException extends BadRequestException {
  constructor(
    readonly problems: FieldProblem[],
    readonly unlisted = 0,
  ) {
    super(problems.map((problem) => problem.message));
  }

  static fromValidationErrors(errors: ValidationError[], part: ValidatedPart = 'body'): RequestValidationException {
    const listing: Listing = { problems: [], unlisted: 0 };
    flatten(errors, part, '', listing);
    return new RequestValidationException(listing.problems, listing.unlisted);
  }
}

interface Listing {
  problems: FieldProblem[];
  unlisted: number;
}

/**
 * Checks of a value's kind. When one fails, the field's other problems are left out: a number given for `text`
 * is "text must be a string", not also a length error about a value that has no length.
 */
const TYPE_CHECKS = new Set(['isString', 'isBoolean', 'isInt', 'isNumber', 'isArray', 'isObject', 'isMongoId', 'nestedValidation']);

/**
 * class-validator's default texts that speak its own jargon ("must be a mongodb id", "property x should not exist"),
 * in plain words naming the field and what is allowed. Only its defaults are replaced (each by its pattern): a
 * message a DTO wrote itself is kept, and the other defaults ("must be a string", "must be one of the following
 * values: ...", "must be shorter than or equal to 200 characters") already say it plainly.
 */
/** `@Length(1, …)` and `@MinLength(1)` say the same of an empty string. */
const NOT_EMPTY = { jargon: /must be longer than or equal to 1 characters$/, plain: (field: string) => `${field} must not be empty` };

const PLAIN_WORDS: Record<string, { jargon: RegExp; plain: (field: string, part: ValidatedPart) => string }> = {
  whitelistValidation: {
    jargon: /should not exist$/,
    plain: (field, part) => (part === 'query' ? `${field} is not a parameter of this query` : `${field} is not a field of this body`),
  },
  isMongoId: { jargon: /must be a mongodb id$/, plain: (field) => `${field} must be a 24-character hex id` },
  isEmail: { jargon: /must be an email$/, plain: (field) => `${field} must be an e-mail address` },
  arrayUnique: { jargon: /elements must be unique$/, plain: (field) => `${field} must not list the same value twice` },
  nestedValidation: { jargon: /must be either object or array$/, plain: (field) => `${field} must be an object` },
  isIso8601: { jargon: /must be a valid ISO 8601 date string$/, plain: (field) => `${field} must be an ISO-8601 date and time, such as 2026-05-01T12:00:00Z` },
  isLength: NOT_EMPTY,
  minLength: NOT_EMPTY,
};

function flatten(errors: ValidationError[], part: ValidatedPart, parent: string, listing: Listing): void {
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const constraints = Object.entries(error.constraints ?? {});
    const typeProblem = constraints.find(([name]) => TYPE_CHECKS.has(name));
    const own = typeProblem ? [typeProblem] : constraints;
    const room = MAX_LISTED_PROBLEMS - listing.problems.length;
    listing.unlisted += Math.max(0, own.length - room);
    for (const [name, text] of own.slice(0, Math.max(0, room))) {
      listing.problems.push({ field, message: plainWords(name, text, error.property, field, part) });
    }
    if (error.children?.length) flatten(error.children, part, field, listing);
  }
}

function plainWords(constraint: string, text: string, property: string, field: string, part: ValidatedPart): string {
  const words = PLAIN_WORDS[constraint];
  if (words?.jargon.test(text)) return words.plain(field, part);
  // class-validator names only the property ("x must be a string"); name the full path instead.
  const own = text.replace(/^property /, '');
  return own.startsWith(property) ? field + own.slice(property.length) : own;
}
