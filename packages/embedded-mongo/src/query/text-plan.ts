/**
 * Answering `$text`: the condition is taken out of the filter (mingo does not know it), the collection's text index
 * gives the candidate documents and their scores, phrases and negations are checked, and the rest of the filter is
 * applied by the caller. `$text` may appear at the top level or inside a top-level `$and`, once per query.
 */
import type { Document } from 'bson';
import { isPlainObject } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import type { Collection } from '../storage/collection.js';
import type { TextIndex } from '../storage/text-index.js';
import { parseTextQuery } from './text-search.js';

export interface TextResult {
  /** The filter without its `$text` condition. */
  rest: Document;
  /** Candidate documents in index order, with their scores. */
  docs: Document[];
  scores: Map<Document, number>;
}

function findNested(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(findNested);
  if (!isPlainObject(value)) return false;
  return Object.entries(value).some(([k, v]) => k === '$text' || findNested(v));
}

/** Splits `$text` off a filter: [its operand, the rest] or null when the filter has none. */
export function splitText(filter: Document): [unknown, Document] | null {
  let text: unknown;
  let found = 0;
  const rest: Document = {};
  for (const [k, v] of Object.entries(filter)) {
    if (k === '$text') {
      text = v;
      found++;
    } else if (k === '$and' && Array.isArray(v)) {
      const kept = v.filter((sub) => {
        if (isPlainObject(sub) && '$text' in sub) {
          const inner = splitText(sub);
          if (inner) {
            text = inner[0];
            found++;
            return Object.keys(inner[1]).length > 0;
          }
        }
        return true;
      });
      if (kept.length) rest.$and = kept;
    } else rest[k] = v;
  }
  if (found === 0) {
    if (findNested(filter)) throw badValue('$text is only allowed at the top level of a query or inside a top-level $and');
    return null;
  }
  if (found > 1) throw badValue('Too many text expressions');
  if (findNested(rest)) throw badValue('Too many text expressions');
  return [text, rest];
}

const isEquality = (v: unknown) => !(isPlainObject(v) && Object.keys(v).some((k) => k.startsWith('$') && k !== '$eq'));

/** Runs the `$text` part of a filter, or answers null when there is none. */
export function textSearch(coll: Collection | undefined, filter: Document): TextResult | null {
  const split = splitText(filter);
  if (!split) return null;
  const [operand, rest] = split;
  const index = [...(coll?.indexes.values() ?? [])].find((ix): ix is TextIndex => ix.kind === 'text');
  if (!index) throw new MongoCommandError(27, 'text index required for $text query');
  for (const f of index.prefixFields)
    if (!(f in rest) || !isEquality(rest[f]))
      throw badValue(`error processing query: planner returned error :: caused by :: failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?): need an equality filter on: ${f}`);
  const q = parseTextQuery(operand, index.defaultLanguage);
  const docs: Document[] = [];
  const scores = new Map<Document, number>();
  for (const [ik, score] of index.candidates(q)) {
    const doc = coll!.docs.get(ik);
    if (!doc || !index.accepts(doc, q)) continue;
    docs.push(doc);
    scores.set(doc, score);
  }
  return { rest, docs, scores };
}
