import { Types } from 'mongoose';
import { escapeRegExp } from '../common/escape-regexp.js';
import type { FilterScalar, ParsedCondition, ParsedFilter } from './filter-parser.js';

/** A MongoDB query built only from parsed filters: field paths and operators of this module's lists. */
export type MongoQuery = Record<string, unknown>;

/** At most this many contacts a `contact.*` condition may match (contract section 20). */
export const MAX_CONTACT_MATCHES = 1000;

export interface QueryOptions {
  /** The time `withinLast` and `olderThan` count back from. */
  now: Date;
  /**
   * The ids of the company's contacts matching `query` (a contact query: `contact.*` conditions on conversations),
   * at most MAX_CONTACT_MATCHES (more: 400 naming `path`). Required when the filter has such conditions.
   */
  contactIds?: (query: MongoQuery, path: string) => Promise<Types.ObjectId[]>;
}

/** Matches nothing (an empty `$in`). */
const NOTHING: MongoQuery = { _id: { $in: [] } };

/** The booleans a condition on a boolean field accepts. */
function acceptedBooleans(condition: ParsedCondition): boolean[] {
  const { op, value } = condition;
  const list = Array.isArray(value) ? (value as boolean[]) : [value as boolean];
  switch (op) {
    case 'eq':
      return [value as boolean];
    case 'ne':
      return [!(value as boolean)];
    case 'in':
      return [true, false].filter((b) => list.includes(b));
    case 'nin':
      return [true, false].filter((b) => !list.includes(b));
    default:
      return [true, false];
  }
}

/** A derived boolean (snoozed, slaBreached) as a query on the field it is read from. */
function derivedBoolean(condition: ParsedCondition): MongoQuery {
  const { field } = condition;
  // `exists` on a derived boolean: it always has a value.
  if (condition.op === 'exists') return condition.value ? {} : NOTHING;
  const accepted = acceptedBooleans(condition);
  if (accepted.length === 2) return {};
  if (accepted.length === 0) return NOTHING;
  const truthy = field.storage === 'present' ? { [field.path]: { $ne: null } } : { [`${field.path}.0`]: { $exists: true } };
  const falsy = field.storage === 'present' ? { [field.path]: null } : { [`${field.path}.0`]: { $exists: false } };
  return accepted[0] ? truthy : falsy;
}

/** One condition on a record's own field. */
export function conditionQuery(condition: ParsedCondition, now: Date): MongoQuery {
  if (condition.field.storage) return derivedBoolean(condition);
  const path = condition.field.path;
  const value = condition.value;
  switch (condition.op) {
    case 'eq':
      return { [path]: { $eq: value } };
    case 'ne':
      return { [path]: { $ne: value } };
    case 'in':
      return { [path]: { $in: value } };
    case 'nin':
      return { [path]: { $nin: value } };
    case 'exists':
      return value ? { [path]: { $ne: null } } : { [path]: null };
    case 'contains':
      return { [path]: { $regex: escapeRegExp(value as string), $options: 'i' } };
    case 'startsWith':
      return { [path]: { $regex: `^${escapeRegExp(value as string)}`, $options: 'i' } };
    case 'gt':
      return { [path]: { $gt: value } };
    case 'gte':
      return { [path]: { $gte: value } };
    case 'lt':
      return { [path]: { $lt: value } };
    case 'lte':
      return { [path]: { $lte: value } };
    case 'between': {
      const [from, to] = value as FilterScalar[];
      return { [path]: { $gte: from, $lte: to } };
    }
    case 'withinLast':
      return { [path]: { $gte: new Date(now.getTime() - (value as number)) } };
    case 'olderThan':
      return { [path]: { $lt: new Date(now.getTime() - (value as number)) } };
  }
}

/**
 * The one translation of a parsed filter to a MongoDB query (the tenant filter is the repository's). A `contact.*`
 * condition on conversations becomes `contactId: { $in: [...] }` of the contacts it matches (options.contactIds).
 */
export async function toMongoQuery(filter: ParsedFilter, options: QueryOptions): Promise<MongoQuery> {
  if (filter.kind === 'condition') {
    if (!filter.field.contact) return conditionQuery(filter, options.now);
    if (!options.contactIds) throw new Error('A contact.* condition needs options.contactIds');
    const ids = await options.contactIds(conditionQuery(filter, options.now), filter.path);
    return { contactId: { $in: ids } };
  }
  const parts = await Promise.all(filter.filters.map((member) => toMongoQuery(member, options)));
  return filter.kind === 'and' ? allOf(...parts) : parts.length === 1 ? parts[0] : { $or: parts };
}

/**
 * The queries together: one object when they name different fields (the plain form a count is bounded on, which a
 * compound index over those fields answers from its keys alone), else `$and`, which never lets one condition
 * overwrite another on the same field.
 */
export function allOf(...queries: MongoQuery[]): MongoQuery {
  if (queries.length === 1) return queries[0];
  const fields = queries.flatMap((query) => Object.keys(query));
  return new Set(fields).size === fields.length ? (Object.assign({}, ...queries) as MongoQuery) : { $and: queries };
}
