import { BadRequestException, type ValidationError } from '@nestjs/common';

export interface FieldProblem {
  field: string;
  message: string;
}

/** A 400 that lists every field problem, built from class-validator's errors by the global ValidationPipe. */
export class RequestValidationException extends BadRequestException {
  constructor(readonly problems: FieldProblem[]) {
    super(problems.map((problem) => problem.message));
  }

  static fromValidationErrors(errors: ValidationError[]): RequestValidationException {
    return new RequestValidationException(flatten(errors));
  }
}

function flatten(errors: ValidationError[], parent = ''): FieldProblem[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    // class-validator names only the property ("email must be an email"); name the full path instead.
    const own = Object.values(error.constraints ?? {}).map((message) => {
      const text = message.replace(/^property /, '');
      return { field, message: text.startsWith(error.property) ? field + text.slice(error.property.length) : text };
    });
    return [...own, ...flatten(error.children ?? [], field)];
  });
}
