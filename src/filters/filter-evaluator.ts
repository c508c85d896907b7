import type { FilterScalar, ParsedCondition, ParsedFilter } from './filter-parser.js';

/** A record as stored (ids as ObjectIds or strings, dates as Dates or ISO strings), and its contact for `contact.*`. */
export interface EvaluatedRecord {
  record: Record<string, unknown>;
  /** The conversation's contact as stored; null or absent: `contact.*` conditions see a contact without fields. */
  contact?: Record<string, unknown> | null;
}

export interface EvaluationOptions {
  now: Date;
}

/** A condition's outcome, for a rule's dry run (`conditions: [{ path, matched }]`). */
export interface ConditionResult {
  path: string;
  matched: boolean;
}

function valueAt(record: Record<string, unknown> | null | undefined, path: string): unknown {
  let current: unknown = record;
  for (const part of path.split('.')) {
    if (current === null || current === undefined || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** Comparable form: ids and dates as what MongoDB compares them by; other types apart (no cross-type order). */
type Key = { kind: 'string' | 'number' | 'boolean' | 'date' | 'id'; value: string | number | boolean };

function keyOf(value: unknown, asDate: boolean): Key | null {
  if (value instanceof Date) return { kind: 'date', value: value.getTime() };
  if (typeof value === 'object' && value !== null && typeof (value as { toHexString?: unknown }).toHexString === 'function') {
    return { kind: 'id', value: (value as { toHexString(): string }).toHexString() };
  }
  if (typeof value === 'string') {
    if (asDate) {
      const time = Date.parse(value);
      return Number.isNaN(time) ? null : { kind: 'date', value: time };
    }
    return { kind: 'string', value };
  }
  if (typeof value === 'number') return { kind: 'number', value };
  if (typeof value === 'boolean') return { kind: 'boolean', value };
  return null;
}

/** A filter's id value compares with a stored id given as a string too (a view's snapshot). */
function sameKind(a: Key, b: Key): boolean {
  return a.kind === b.kind || (a.kind === 'id' && b.kind === 'string') || (a.kind === 'string' && b.kind === 'id');
}

function equal(stored: unknown, wanted: FilterScalar, asDate: boolean): boolean {
  const a = keyOf(stored, asDate);
  const b = keyOf(wanted, asDate);
  return a !== null && b !== null && sameKind(a, b) && a.value === b.value;
}

function compare(stored: unknown, wanted: FilterScalar, asDate: boolean): number | null {
  const a = keyOf(stored, asDate);
  const b = keyOf(wanted, asDate);
  if (a === null || b === null || a.kind !== b.kind || a.kind === 'boolean') return null;
  return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
}

/** As MongoDB reads a path: a scalar, or each element of an array (and the array itself for equality). */
function candidates(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

function derived(condition: ParsedCondition, target: Record<string, unknown> | null | undefined): boolean {
  const stored = valueAt(target, condition.field.path);
  const actual = condition.field.storage === 'present' ? stored !== null && stored !== undefined : Array.isArray(stored) && stored.length > 0;
  const { op, value } = condition;
  switch (op) {
    case 'eq':
      return actual === value;
    case 'ne':
      return actual !== value;
    case 'in':
      return (value as boolean[]).includes(actual);
    case 'nin':
      return !(value as boolean[]).includes(actual);
    default:
      return value === true;
  }
}

function conditionMatches(condition: ParsedCondition, subject: EvaluatedRecord, options: EvaluationOptions): boolean {
  const target = condition.field.contact ? subject.contact : subject.record;
  if (condition.field.storage) return derived(condition, target);
  const stored = valueAt(target, condition.field.path);
  const asDate = condition.field.type === 'date';
  const values = candidates(stored);
  const any = (test: (item: unknown) => boolean) => values.some(test);
  const isEq = (wanted: FilterScalar) => any((item) => equal(item, wanted, asDate));
  const ordered = (wanted: FilterScalar, accept: (order: number) => boolean) =>
    any((item) => {
      const order = compare(item, wanted, asDate);
      return order !== null && accept(order);
    });
  const { value } = condition;
  switch (condition.op) {
    case 'eq':
      return isEq(value as FilterScalar);
    case 'ne':
      return !isEq(value as FilterScalar);
    case 'in':
      return (value as FilterScalar[]).some(isEq);
    case 'nin':
      return !(value as FilterScalar[]).some(isEq);
    case 'exists': {
      const present = stored !== null && stored !== undefined && !(Array.isArray(stored) && stored.includes(null));
      return value ? present : !present;
    }
    case 'contains':
      return any((item) => typeof item === 'string' && item.toLowerCase().includes((value as string).toLowerCase()));
    case 'startsWith':
      return any((item) => typeof item === 'string' && item.toLowerCase().startsWith((value as string).toLowerCase()));
    case 'gt':
      return ordered(value as FilterScalar, (order) => order > 0);
    case 'gte':
      return ordered(value as FilterScalar, (order) => order >= 0);
    case 'lt':
      return ordered(value as FilterScalar, (order) => order < 0);
    case 'lte':
      return ordered(value as FilterScalar, (order) => order <= 0);
    case 'between': {
      const [from, to] = value as FilterScalar[];
      return any((item) => {
        const low = compare(item, from, asDate);
        const high = compare(item, to, asDate);
        return low !== null && high !== null && low >= 0 && high <= 0;
      });
    }
    case 'withinLast':
      return ordered(new Date(options.now.getTime() - (value as number)), (order) => order >= 0);
    case 'olderThan':
      return ordered(new Date(options.now.getTime() - (value as number)), (order) => order < 0);
  }
}

function evaluate(filter: ParsedFilter, subject: EvaluatedRecord, options: EvaluationOptions, results: ConditionResult[] | null): boolean {
  if (filter.kind === 'condition') {
    const matched = conditionMatches(filter, subject, options);
    results?.push({ path: filter.path, matched });
    return matched;
  }
  // Every member is evaluated (no short cut) when results are collected, so a dry run shows each condition.
  const outcomes = results ? filter.filters.map((member) => evaluate(member, subject, options, results)) : null;
  if (outcomes) return filter.kind === 'and' ? outcomes.every(Boolean) : outcomes.some(Boolean);
  return filter.kind === 'and'
    ? filter.filters.every((member) => evaluate(member, subject, options, null))
    : filter.filters.some((member) => evaluate(member, subject, options, null));
}

/**
 * Whether a stored record matches a parsed filter, in memory, with MongoDB's semantics (what toMongoQuery asks the
 * database): an array field matches when an element does, `ne`/`nin` match a missing field, values of different
 * types never compare.
 */
export function matchesFilter(filter: ParsedFilter, subject: EvaluatedRecord, options: EvaluationOptions): boolean {
  return evaluate(filter, subject, options, null);
}

/** `matchesFilter` with each condition's own outcome, in order (a rule's dry run). */
export function explainFilter(
  filter: ParsedFilter,
  subject: EvaluatedRecord,
  options: EvaluationOptions,
): { matched: boolean; conditions: ConditionResult[] } {
  const conditions: ConditionResult[] = [];
  const matched = evaluate(filter, subject, options, conditions);
  return { matched, conditions };
}
