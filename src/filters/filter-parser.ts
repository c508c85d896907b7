import { Types } from 'mongoose';
import { parseAttributeDate } from '../attributes/attribute-values.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import {
  FILTER_OPERATORS,
  OPERATORS_BY_TYPE,
  fieldNames,
  resolveField,
  type FilterField,
  type FilterOperator,
  type FilterSchema,
} from './filter-fields.js';

/** At most this many levels of `and`/`or`, and conditions in all (contract section 20). */
export const MAX_FILTER_DEPTH = 4;
export const MAX_FILTER_CONDITIONS = 30;
export const MAX_IN_VALUES = 100;

/** A scalar a condition compares with, as stored: ObjectIds for ids, Dates for dates. */
export type FilterScalar = string | number | boolean | Date | Types.ObjectId;

/** A checked condition: `path` is its place in the request (`filter.and[1]`), `value` in stored types. */
export interface ParsedCondition {
  kind: 'condition';
  path: string;
  field: FilterField;
  op: FilterOperator;
  /** eq/ne/gt/...: one scalar; in/nin: a list; between: [from, to]; exists: a boolean; withinLast/olderThan: milliseconds. */
  value: FilterScalar | FilterScalar[] | boolean | number;
}

export interface ParsedGroup {
  kind: 'and' | 'or';
  path: string;
  filters: ParsedFilter[];
}

/** A filter as the parser leaves it: checked, every field resolved, every value of its stored type. */
export type ParsedFilter = ParsedCondition | ParsedGroup;

const DURATION = /^([1-9]\d{0,5})([mhd])$/;
const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

class FilterProblem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A duration such as "30m", "12h" or "7d" in milliseconds, or null. */
export function parseDuration(value: unknown): number | null {
  const match = typeof value === 'string' ? DURATION.exec(value) : null;
  return match ? Number(match[1]) * UNIT_MS[match[2]] : null;
}

function scalar(field: FilterField, value: unknown, path: string): FilterScalar {
  switch (field.type) {
    case 'text':
      if (typeof value !== 'string' || value.length === 0 || value.length > 1000)
        throw new FilterProblem(path, `${path} must be a string of 1 to 1000 characters (${field.name} is text)`);
      if (field.values && !field.values.includes(value)) {
        throw new FilterProblem(
          path,
          `${path} must be one of ${field.values.map((v) => JSON.stringify(v)).join(', ')} (the values of ${field.name})`,
        );
      }
      return value;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value))
        throw new FilterProblem(path, `${path} must be a finite number (${field.name} is a number)`);
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw new FilterProblem(path, `${path} must be true or false (${field.name} is a boolean)`);
      return value;
    case 'date': {
      const date = typeof value === 'string' ? parseAttributeDate(value) : null;
      if (!date) throw new FilterProblem(path, `${path} must be a date (YYYY-MM-DD) or an ISO-8601 time with a zone (${field.name} is a date)`);
      return date;
    }
    case 'id':
      if (typeof value !== 'string' || !/^[0-9a-f]{24}$/.test(value))
        throw new FilterProblem(path, `${path} must be a 24-character hex id (${field.name} is an id)`);
      return new Types.ObjectId(value);
  }
}

function conditionValue(field: FilterField, op: FilterOperator, value: unknown, path: string): ParsedCondition['value'] {
  switch (op) {
    case 'exists':
      if (typeof value !== 'boolean') throw new FilterProblem(path, `${path} must be true or false (exists)`);
      return value;
    case 'in':
    case 'nin':
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IN_VALUES)
        throw new FilterProblem(path, `${path} must be a list of 1 to ${MAX_IN_VALUES} values (${op})`);
      return value.map((item, i) => scalar(field, item, `${path}[${i}]`));
    case 'between': {
      if (!Array.isArray(value) || value.length !== 2) throw new FilterProblem(path, `${path} must be [from, to] (between)`);
      const [from, to] = value.map((item, i) => scalar(field, item, `${path}[${i}]`));
      if ((from as number | Date) > (to as number | Date)) throw new FilterProblem(path, `${path} must be [from, to] with from not after to`);
      return [from, to];
    }
    case 'withinLast':
    case 'olderThan': {
      const ms = parseDuration(value);
      if (ms === null) throw new FilterProblem(path, `${path} must be a duration such as "30m", "12h" or "7d" (${op})`);
      return ms;
    }
    default:
      return scalar(field, value, path);
  }
}

function parseCondition(schema: FilterSchema, input: Record<string, unknown>, path: string): ParsedCondition {
  const extra = Object.keys(input).find((key) => !['field', 'op', 'value'].includes(key));
  if (extra !== undefined)
    throw new FilterProblem(`${path}.${extra}`, `${path}.${extra} is not part of a condition: a condition is { field, op, value }`);
  if (typeof input.field !== 'string')
    throw new FilterProblem(`${path}.field`, `${path}.field must be one of ${fieldNames(schema.model).join(', ')}`);
  const field = resolveField(schema, input.field);
  if (!field) {
    const attribute = /^(contact\.)?attributes\./.test(input.field);
    throw new FilterProblem(
      `${path}.field`,
      attribute
        ? `${path}.field: ${input.field} is not a defined attribute of your company`
        : `${path}.field must be one of ${fieldNames(schema.model).join(', ')}`,
    );
  }
  const allowed = OPERATORS_BY_TYPE[field.type];
  if (typeof input.op !== 'string' || !(FILTER_OPERATORS as readonly string[]).includes(input.op)) {
    throw new FilterProblem(`${path}.op`, `${path}.op must be one of ${allowed.join(', ')} (for ${field.name})`);
  }
  const op = input.op as FilterOperator;
  if (!allowed.includes(op)) throw new FilterProblem(`${path}.op`, `${path}.op: ${field.name} takes ${allowed.join(', ')}, not ${op}`);
  if (!('value' in input)) throw new FilterProblem(`${path}.value`, `${path}.value is missing`);
  return { kind: 'condition', path, field, op, value: conditionValue(field, op, input.value, `${path}.value`) };
}

function parseNode(schema: FilterSchema, input: unknown, path: string, depth: number, count: { conditions: number }): ParsedFilter {
  if (!isObject(input)) throw new FilterProblem(path, `${path} must be a condition { field, op, value } or { and: [...] } / { or: [...] }`);
  const group = 'and' in input ? 'and' : 'or' in input ? 'or' : null;
  if (group === null) {
    count.conditions += 1;
    if (count.conditions > MAX_FILTER_CONDITIONS)
      throw new FilterProblem(path, `${path}: a filter holds at most ${MAX_FILTER_CONDITIONS} conditions`);
    return parseCondition(schema, input, path);
  }
  const extra = Object.keys(input).find((key) => key !== group);
  if (extra !== undefined)
    throw new FilterProblem(`${path}.${extra}`, `${path}.${extra} is not allowed beside ${group}: a group is { ${group}: [...] } alone`);
  if (depth >= MAX_FILTER_DEPTH)
    throw new FilterProblem(`${path}.${group}`, `${path}.${group}: a filter nests at most ${MAX_FILTER_DEPTH} levels of and/or`);
  const members = input[group];
  if (!Array.isArray(members) || members.length === 0)
    throw new FilterProblem(`${path}.${group}`, `${path}.${group} must be a non-empty list of filters`);
  return { kind: group, path, filters: members.map((member, i) => parseNode(schema, member, `${path}.${group}[${i}]`, depth + 1, count)) };
}

/**
 * Checks a filter (contract section 20) against `schema` and answers it with every field resolved and every value of
 * its stored type. Anything else is a 400 naming its place (`filter.or[0].and[2].op`) and what was expected: only
 * fields and operators of the lists pass, so no filter can carry a MongoDB operator of its own.
 */
export function parseFilter(schema: FilterSchema, input: unknown, path = 'filter'): ParsedFilter {
  try {
    return parseNode(schema, input, path, 0, { conditions: 0 });
  } catch (error) {
    if (error instanceof FilterProblem) throw new RequestValidationException([{ field: error.field, message: error.message }]);
    throw error;
  }
}

/** Every condition of a filter, in order. */
export function conditionsOf(filter: ParsedFilter): ParsedCondition[] {
  return filter.kind === 'condition' ? [filter] : filter.filters.flatMap(conditionsOf);
}
