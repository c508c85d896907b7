import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';

/**
 * The field may be left out, but when present every other rule applies, `null` included (unlike
 * `@IsOptional()`, which lets `null` through): for PATCH bodies where `null` is not a value.
 */
export const IsOmittable = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** A query-string boolean: "true" and "false" become booleans; anything else is left for `@IsBoolean()` to refuse. */
export const QueryBoolean = () =>
  Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value));
