/**
 * Positional update paths (`a.$.b`, `a.$[].b`, `a.$[elem].b`) resolved to concrete array positions against the
 * document as it was before the update, as MongoDB does: `$` is the first element the query matched, `$[]` every
 * element, `$[id]` every element its array filter matches. Several paths under the same element (what Mongoose's
 * subdocument timestamps send) are then plain, non-conflicting paths. Array filters are validated as MongoDB does.
 */
import type { Document } from 'bson';
import { isPlainObject, setOwn } from '../bson-values.js';
import { badValue, failedToParse } from '../errors.js';
import { compileFilter, type EvalOptions, type Matcher } from './mingo.js';

const IDENTIFIER = /^[a-z][a-zA-Z0-9]*$/;

export const isPositional = (path: string) => path.split('.').some((p) => p === '$' || (p.startsWith('$[') && p.endsWith(']')));

/** Array filters by identifier, each compiled against `{ <id>: element }`. */
function parseArrayFilters(arrayFilters: Document[] | undefined, e: EvalOptions | undefined): Map<string, Matcher> {
  const out = new Map<string, Matcher>();
  for (const filter of arrayFilters ?? []) {
    if (!isPlainObject(filter)) throw failedToParse('Each array filter must be an object');
    const ids = new Set(
      Object.keys(filter).map((k) => {
        if (k.startsWith('$')) {
          const sub = filter[k];
          const first = Array.isArray(sub) && isPlainObject(sub[0]) ? Object.keys(sub[0])[0] : undefined;
          return first?.split('.')[0] ?? k;
        }
        return k.split('.')[0];
      }),
    );
    if (ids.size !== 1) throw failedToParse(`Error parsing array filter :: caused by :: Expected a single top-level field name, found ${[...ids].map((i) => `'${i}'`).join(' and ')}`);
    const [id] = ids;
    if (!IDENTIFIER.test(id)) throw badValue(`Error parsing array filter :: caused by :: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '${id}'`);
    if (out.has(id)) throw failedToParse(`Found multiple array filters with the same top-level field name ${id}`);
    out.set(id, compileFilter(filter, e));
  }
  return out;
}

/** The first-level conditions of the filter on `field` or below it, for the `$` operator. */
function positionalMatcher(filter: Document | undefined, field: string, e: EvalOptions | undefined): Matcher | null {
  const conditions: Document = {};
  const collect = (f: Document) => {
    for (const [k, v] of Object.entries(f)) {
      if (k === '$and' && Array.isArray(v)) v.forEach((sub) => isPlainObject(sub) && collect(sub));
      else if (k === field || k.startsWith(`${field}.`)) conditions[k] = v;
    }
  };
  if (filter) collect(filter);
  return Object.keys(conditions).length ? compileFilter(conditions, e) : null;
}

/** Wraps an element as the document a filter on `field` is tested against. */
function wrap(field: string, element: unknown): Document {
  const out: Document = {};
  let target = out;
  const parts = field.split('.');
  parts.slice(0, -1).forEach((p) => {
    const next: Document = {};
    setOwn(target, p, next);
    target = next;
  });
  setOwn(target, parts[parts.length - 1], [element]);
  return out;
}

interface Expander {
  doc: Document;
  filter?: Document;
  filters: Map<string, Matcher>;
  used: Set<string>;
  e?: EvalOptions;
}

/** Concrete paths for one positional path. */
function expand(x: Expander, path: string): string[] {
  const parts = path.split('.');
  const out: string[] = [];
  const walk = (value: unknown, i: number, prefix: string[]) => {
    if (i === parts.length) {
      out.push(prefix.join('.'));
      return;
    }
    const part = parts[i];
    const positional = part === '$' || (part.startsWith('$[') && part.endsWith(']'));
    if (!positional) {
      walk(isPlainObject(value) ? value[part] : Array.isArray(value) && /^\d+$/.test(part) ? value[Number(part)] : undefined, i + 1, [...prefix, part]);
      return;
    }
    const arrayPath = prefix.join('.');
    if (!Array.isArray(value)) throw badValue(`The path '${arrayPath}' must exist in the document in order to apply array updates.`);
    let indexes: number[];
    if (part === '$') {
      const matcher = positionalMatcher(x.filter, arrayPath, x.e);
      const found = matcher ? value.findIndex((el) => matcher.test(wrap(arrayPath, el))) : -1;
      if (found < 0) throw badValue('The positional operator did not find the match needed from the query.');
      indexes = [found];
    } else if (part === '$[]') {
      indexes = value.map((_, n) => n);
    } else {
      const id = part.slice(2, -1);
      const matcher = x.filters.get(id);
      if (!matcher) throw badValue(`No array filter found for identifier '${id}' in path '${path}'`);
      x.used.add(id);
      indexes = value.flatMap((el, n) => (matcher.test({ [id]: el }) ? [n] : []));
    }
    for (const n of indexes) walk(value[n], i + 1, [...prefix, String(n)]);
  };
  walk(x.doc, 0, []);
  return out;
}

/**
 * The modifier with every positional path replaced by the concrete paths it designates in `doc` (each with the same
 * operand). `filter` serves `$`; `arrayFilters` serve `$[id]`, and must all be used.
 */
export function expandPositional(doc: Document, modifier: Document, filter: Document | undefined, arrayFilters: Document[] | undefined, e?: EvalOptions): Document {
  const x: Expander = { doc, filter, filters: parseArrayFilters(arrayFilters, e), used: new Set(), e };
  let out: Document | undefined;
  for (const [op, fields] of Object.entries(modifier)) {
    if (!Object.keys(fields as Document).some(isPositional)) continue;
    const expanded: Document = {};
    for (const [path, operand] of Object.entries(fields as Document)) {
      if (!isPositional(path)) expanded[path] = operand;
      else for (const concrete of expand(x, path)) expanded[concrete] = operand;
    }
    (out ??= { ...modifier })[op] = expanded;
  }
  for (const id of x.filters.keys()) if (!x.used.has(id)) throw failedToParse(`The array filter for identifier '${id}' was not used in the update`);
  return out ?? modifier;
}
