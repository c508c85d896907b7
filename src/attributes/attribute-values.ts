import type { Types } from 'mongoose';
import { RequestValidationException, type FieldProblem } from '../common/errors/request-validation.exception.js';
import { parseTimestamp } from '../messages/timestamp.js';
import { MAX_TEXT_ATTRIBUTE_LENGTH, type AttributeModel, type AttributeType } from './attribute-definition.schema.js';

/** A value as stored: dates as Dates, so that they compare and sort as times. */
export type StoredAttributeValue = string | number | boolean | Date;

/** What checking a definition needs of it. */
export interface AttributeRule {
  key: string;
  type: AttributeType;
  options: string[];
  archived: boolean;
}

/** A checked `attributes` patch: the keys to set (values as stored) and the keys to remove (`null`). */
export interface AttributePatch {
  set: Record<string, StoredAttributeValue>;
  unset: string[];
}

/**
 * Emitted in-process (awaited, `emitAsync`) when a definition is deleted: whoever stores values of that model
 * removes the key from every record of the company before the deletion answers.
 */
export const ATTRIBUTE_VALUES_REMOVED = 'attributes.values-removed';
export interface AttributeValuesRemoved {
  companyId: Types.ObjectId;
  model: AttributeModel;
  key: string;
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `YYYY-MM-DD` (midnight UTC) or ISO-8601 with a zone; null for anything else. */
export function parseAttributeDate(value: string): Date | null {
  if (!DATE_ONLY.test(value) && !value.includes('T')) return null;
  return parseTimestamp(value);
}

const TYPE_WORDS: Record<AttributeType, string> = {
  text: `a string of at most ${MAX_TEXT_ATTRIBUTE_LENGTH} characters`,
  number: 'a finite number',
  boolean: 'true or false',
  date: 'a date (YYYY-MM-DD) or an ISO-8601 time with a zone',
  list: 'one of the options',
};

/** The stored form of `value` for `rule`, or what was expected (a sentence ending) when it does not fit. */
export function storedValueOf(rule: Pick<AttributeRule, 'type' | 'options'>, value: unknown): { value: StoredAttributeValue } | { expected: string } {
  switch (rule.type) {
    case 'text':
      return typeof value === 'string' && value.length <= MAX_TEXT_ATTRIBUTE_LENGTH ? { value } : { expected: TYPE_WORDS.text };
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? { value } : { expected: TYPE_WORDS.number };
    case 'boolean':
      return typeof value === 'boolean' ? { value } : { expected: TYPE_WORDS.boolean };
    case 'date': {
      const date = typeof value === 'string' ? parseAttributeDate(value) : null;
      return date ? { value: date } : { expected: TYPE_WORDS.date };
    }
    case 'list':
      return typeof value === 'string' && rule.options.includes(value)
        ? { value }
        : { expected: `one of ${rule.options.map((option) => JSON.stringify(option)).join(', ')}` };
  }
}

/**
 * Checks an `attributes` patch against the model's definitions: every key defined and not archived, every value of
 * its type (`null` removes the key). 400 naming each key (`attributes.<key>`) otherwise.
 */
export function checkAttributePatch(
  model: AttributeModel,
  rules: ReadonlyMap<string, AttributeRule>,
  input: Record<string, unknown>,
): AttributePatch {
  const patch: AttributePatch = { set: {}, unset: [] };
  const problems: FieldProblem[] = [];
  for (const [key, value] of Object.entries(input)) {
    const field = `attributes.${key}`;
    const rule = rules.get(key);
    if (!rule) {
      problems.push({ field, message: `${field} is not a ${model} attribute of your company: define it first (POST /v1/attribute-definitions)` });
    } else if (value === null) {
      patch.unset.push(key);
    } else if (rule.archived) {
      problems.push({ field, message: `${field} is archived: it takes no new value (null removes it)` });
    } else {
      const checked = storedValueOf(rule, value);
      if ('value' in checked) patch.set[key] = checked.value;
      else problems.push({ field, message: `${field} must be ${checked.expected}` });
    }
  }
  if (problems.length) throw new RequestValidationException(problems);
  return patch;
}

/** The attributes as answered: dates as ISO-8601. */
export function attributesView(attributes: Record<string, unknown> | null | undefined): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(attributes ?? {})) view[key] = value instanceof Date ? value.toISOString() : value;
  return view;
}

/**
 * The `changes` entries (`attributes.<key>: [before, after]`) of applying `patch` to `before`, values as answered;
 * a key set to the value it had is no change.
 */
export function attributeChanges(before: Record<string, unknown> | null | undefined, patch: AttributePatch): Record<string, [unknown, unknown]> {
  const was = attributesView(before);
  const changes: Record<string, [unknown, unknown]> = {};
  for (const [key, value] of Object.entries(attributesView(patch.set))) {
    if (JSON.stringify(was[key] ?? null) !== JSON.stringify(value)) changes[`attributes.${key}`] = [was[key] ?? null, value];
  }
  for (const key of patch.unset) if (key in was) changes[`attributes.${key}`] = [was[key], null];
  return changes;
}

/** The `$set`/`$unset` of a patch on the `attributes` object. */
export function attributeUpdate(patch: AttributePatch): { $set?: Record<string, StoredAttributeValue>; $unset?: Record<string, 1> } {
  const update: { $set?: Record<string, StoredAttributeValue>; $unset?: Record<string, 1> } = {};
  if (Object.keys(patch.set).length) update.$set = Object.fromEntries(Object.entries(patch.set).map(([key, value]) => [`attributes.${key}`, value]));
  if (patch.unset.length) update.$unset = Object.fromEntries(patch.unset.map((key) => [`attributes.${key}`, 1 as const]));
  return update;
}
