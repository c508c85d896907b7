import { applyDecorators } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { ValidateBy, ValidateIf } from 'class-validator';

/**
 * The field may be left out, but when present every other rule applies, `null` included (unlike
 * `@IsOptional()`, which lets `null` through): for PATCH bodies where `null` is not a value.
 */
export const IsOmittable = () => ValidateIf((_object: object, value: unknown) => value !== undefined);

/** A query-string boolean: "true" and "false" become booleans; anything else is left for `@IsBoolean()` to refuse. */
export const QueryBoolean = () =>
  Transform(({ value }) => (value === 'true' ? true : value === 'false' ? false : value));

/**
 * A field a change may never send: its 400 says why and what to do `instead`, where the whitelist would only call it
 * unknown. Pair it with `@ApiHideProperty()`, which only the Swagger plugin reads, in the source.
 */
export const NeverChanges = (instead: string) =>
  applyDecorators(
    IsOmittable(),
    ValidateBy({
      name: 'neverChanges',
      validator: { validate: () => false, defaultMessage: (args) => `${args?.property} never changes: ${instead}` },
    }),
  );
