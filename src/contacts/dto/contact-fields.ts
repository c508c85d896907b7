import { Transform } from 'class-transformer';
import type { ApiPropertyOptions } from '@nestjs/swagger';
import { registerDecorator, type ValidationOptions } from 'class-validator';

export const MAX_ATTRIBUTES = 50;
const MAX_ATTRIBUTE_KEY_LENGTH = 100;
const MAX_ATTRIBUTE_STRING_LENGTH = 1000;

export type AttributeValue = string | number | boolean | null;

/** Trims a string, leaving anything else to the type validators. */
export const Trim = () => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

function isAttributeValue(value: unknown): value is AttributeValue {
  return (
    value === null ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value)) ||
    (typeof value === 'string' && value.length <= MAX_ATTRIBUTE_STRING_LENGTH)
  );
}

/**
 * Contact attributes are flat: scalar values only, so they stay simple to show, filter and export.
 * Keys with "." are refused because MongoDB would read them as paths in any later query or update.
 */
export function isContactAttributes(value: unknown): value is Record<string, AttributeValue> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return (
    entries.length <= MAX_ATTRIBUTES &&
    entries.every(
      ([key, item]) =>
        key.length >= 1 &&
        key.length <= MAX_ATTRIBUTE_KEY_LENGTH &&
        !key.includes('.') &&
        !key.startsWith('$') &&
        isAttributeValue(item),
    )
  );
}

export const ATTRIBUTES_RULE =
  `an object of at most ${MAX_ATTRIBUTES} keys (1 to ${MAX_ATTRIBUTE_KEY_LENGTH} characters, no "." and no leading "$") ` +
  `whose values are strings (at most ${MAX_ATTRIBUTE_STRING_LENGTH} characters), numbers, booleans or null`;

export function IsContactAttributes(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isContactAttributes',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: `$property must be ${ATTRIBUTES_RULE}`, ...options },
      validator: { validate: (value: unknown) => isContactAttributes(value) },
    });
}

/** The OpenAPI schema of `attributes`. */
export const ATTRIBUTES_SCHEMA = {
  type: 'object',
  maxProperties: MAX_ATTRIBUTES,
  additionalProperties: {
    anyOf: [
      { type: 'string', nullable: true },
      { type: 'number', nullable: true },
      { type: 'boolean', nullable: true },
    ],
  },
  description: `Free-form key/values: ${ATTRIBUTES_RULE}`,
  example: { plan: 'pro', seats: 12, trial: false },
} satisfies ApiPropertyOptions;
