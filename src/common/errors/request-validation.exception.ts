import { BadRequestException, type ValidationError } from '@nestjs/common';
import { MAX_LISTED_PROBLEMS } from './error-budget.js';

export interface FieldProblem {
  field: string;
  message: string;
}

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

  static fromValidationErrors(errors: ValidationError[]): RequestValidationException {
    const listing = { problems: [] as FieldProblem[], unlisted: 0 };
    flatten(errors, '', listing);
    return new RequestValidationException(listing.problems, listing.unlisted);
  }
}

function flatten(errors: ValidationError[], parent: string, listing: { problems: FieldProblem[]; unlisted: number }): void {
  for (const error of errors) {
    const constraints = Object.values(error.constraints ?? {});
    const room = MAX_LISTED_PROBLEMS - listing.problems.length;
    listing.unlisted += Math.max(0, constraints.length - room);
    if (room > 0) {
      const field = parent ? `${parent}.${error.property}` : error.property;
      // class-validator names only the property ("email must be an email"); name the full path instead.
      for (const message of constraints.slice(0, room)) {
        const text = message.replace(/^property /, '');
        listing.problems.push({ field, message: text.startsWith(error.property) ? field + text.slice(error.property.length) : text });
      }
    }
    if (error.children?.length) flatten(error.children, parent ? `${parent}.${error.property}` : error.property, listing);
  }
}
