/**
 * Answering `$text`: the condition is taken out of the filter (mingo does not know it) and becomes a TextPlan: the
 * candidates of the collection's text index (the documents of the query's prefix holding at least one of its terms,
 * what MongoDB's TEXT_OR stage reads) and the test of one document against the whole search (a positive term, every
 * phrase, no negated term or phrase: MongoDB's FTSMatcher). The planner either tests each candidate against the rest
 * of the filter, or, for a limited sort an index serves, walks that index in order and tests each document it meets
 * against the search too, stopping at the limit, whichever reads fewer documents (query/planner.ts). Both give
 * MongoDB's answer. `$text` may appear at the top level or inside a top-level `$and`, once per query.
 */
import type { Document } from 'bson';
import { isPlainObject } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import type { Collection } from '../storage/collection.js';
import { prefixKeyOf, type TextIndex } from '../storage/text-index.js';
import { containsPhrase, foldText, parseTextQuery, terms, type TextQuery } from './text-search.js';

/** The `$text` scores of a read's documents (computed when first asked for). */
export interface TextScores {
  get(doc: Document): number | undefined;
}

export interface TextPlan {
  /** The filter without its `$text` condition. */
  rest: Document;
  /** Keys of the documents holding at least one positive term, each once. */
  candidates(): Iterable<string>;
  /** How many postings `candidates` reads (an upper bound of their number). */
  readonly candidateCount: number;
  /** Documents expected to match: the fewest holding a term every match must hold (a phrase's), else the candidates. */
  readonly expectedMatches: number;
  /** Whether a stored document (of any prefix) matches the search. */
  matches(doc: Document, ik: string): boolean;
  scores: TextScores;
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

/** The value an equality condition (`v` or `{ $eq: v }`) compares with. */
const equalityValue = (v: unknown) => (isPlainObject(v) && '$eq' in v ? v.$eq : v);

/** A phrase that is one token whose folded form is its own index term: a document holding the term contains it. */
function isTermPhrase(phrase: string, q: TextQuery): string | null {
  if (q.caseSensitive || q.diacriticSensitive) return null;
  const found = terms(phrase, q.language);
  return found.length === 1 && found[0] === foldText(phrase) ? found[0] : null;
}

/** Prepares the `$text` part of a filter, or answers null when there is none. */
export function textSearch(coll: Collection | undefined, filter: Document): TextPlan | null {
  const split = splitText(filter);
  if (!split) return null;
  const [operand, rest] = split;
  const index = [...(coll?.indexes.values() ?? [])].find((ix): ix is TextIndex => ix.kind === 'text');
  if (!index) throw new MongoCommandError(27, 'text index required for $text query');
  for (const f of index.prefixFields)
    if (!(f in rest) || !isEquality(rest[f]))
      throw badValue(`error processing query: planner returned error :: caused by :: failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?): need an equality filter on: ${f}`);
  const q = parseTextQuery(operand, index.defaultLanguage);
  return new IndexedTextSearch(index, prefixKeyOf(index.prefixFields.map((f) => equalityValue(rest[f]))), q, rest);
}

class IndexedTextSearch implements TextPlan {
  readonly candidateCount: number;
  readonly expectedMatches: number;
  private readonly termPhrases: (string | null)[];
  private readonly sensitive: boolean;
  private readonly scoreCache = new WeakMap<Document, number>();
  readonly scores: TextScores = { get: (doc) => this.score(doc) };

  constructor(
    private readonly index: TextIndex,
    private readonly prefix: string,
    private readonly q: TextQuery,
    readonly rest: Document,
  ) {
    this.sensitive = q.caseSensitive || q.diacriticSensitive;
    this.termPhrases = q.phrases.map((p) => isTermPhrase(p, q));
    this.candidateCount = q.terms.reduce((sum, t) => sum + this.holding(t).size, 0);
    const required = this.termPhrases.filter((t): t is string => t !== null).map((t) => this.holding(t).size);
    this.expectedMatches = required.length ? Math.min(...required) : this.candidateCount;
  }

  private holding(term: string): ReadonlySet<string> {
    return this.index.holding(this.prefix, term);
  }

  *candidates(): Iterable<string> {
    if (this.q.terms.length === 1) {
      yield* this.holding(this.q.terms[0]);
      return;
    }
    const seen = new Set<string>();
    for (const term of this.q.terms)
      for (const ik of this.holding(term)) {
        if (seen.has(ik)) continue;
        seen.add(ik);
        yield ik;
      }
  }

  matches(doc: Document, ik: string): boolean {
    const q = this.q;
    // Postings are per prefix: a document of another prefix holds none of its terms.
    if (!q.terms.some((t) => this.holding(t).has(ik))) return false;
    const texts = q.phrases.length || q.negatedPhrases.length || this.sensitive ? this.index.texts(doc).map(([s]) => s) : [];
    if (this.sensitive) {
      const language = this.index.languageOf(doc);
      const exact = new Set(texts.flatMap((s) => terms(s, language, q)));
      if (!q.exactTerms.some((t) => exact.has(t))) return false;
      if (q.negatedTerms.some((t) => exact.has(t))) return false;
    } else if (q.negatedTerms.some((t) => this.holding(t).has(ik))) return false;
    const hasPhrase = (p: string) => texts.some((s) => containsPhrase(s, p, q));
    for (let i = 0; i < q.phrases.length; i++) {
      const term = this.termPhrases[i];
      if (!(term !== null && this.holding(term).has(ik)) && !hasPhrase(q.phrases[i])) return false;
    }
    return !q.negatedPhrases.some(hasPhrase);
  }

  /** MongoDB's score: the document's scores of the index terms of the search it holds, summed. */
  private score(doc: Document): number {
    let score = this.scoreCache.get(doc);
    if (score === undefined) {
      const scores = this.index.termScores(doc);
      score = this.q.terms.reduce((sum, t) => sum + (scores.get(t) ?? 0), 0);
      this.scoreCache.set(doc, score);
    }
    return score;
  }
}
