/**
 * A text index: an inverted index from stemmed term to the documents holding it and their score for the term
 * (query/text-search.ts). Compound text indexes keep their prefix and suffix fields in the spec; a `$text` query must
 * give equality conditions on the prefix fields, which the full filter then applies. One text index per collection.
 */
import type { Document } from 'bson';
import { isPlainObject, toNumber } from '../bson-values.js';
import { MongoCommandError } from '../errors.js';
import { compileFilter, type Matcher } from '../query/mingo.js';
import { containsPhrase, foldText, scoreText, terms, textLanguage, type TextLanguage, type TextQuery } from '../query/text-search.js';

const MAX_WEIGHT = 1_000_000_000;

const cannotCreate = (message: string) => new MongoCommandError(67, message);

/** Whether an index spec's key declares text fields (`'text'` values or an already normalised `_fts`). */
export const isTextSpec = (spec: Document) => Object.entries((spec.key as Document) ?? {}).some(([k, v]) => v === 'text' || k === '_fts');

/**
 * The spec as MongoDB stores it: key `{ <prefix>, _fts: 'text', _ftsx: 1, <suffix> }`, `weights` for every text
 * field (sorted by name), `default_language`, `language_override`, `textIndexVersion: 3`.
 */
export function normalizeTextSpec(spec: Document): Document {
  const key = spec.key as Document;
  const weights = new Map<string, number>();
  const fixed: Document = {};
  let phase: 'prefix' | 'text' | 'suffix' = 'prefix';
  for (const [field, v] of Object.entries(key)) {
    if (field === '_fts' || field === '_ftsx') {
      if (field === '_fts' && v !== 'text') throw cannotCreate('expecting _fts:"text"');
      phase = 'text';
      fixed[field] = v;
      continue;
    }
    if (field.startsWith('_fts')) throw cannotCreate('text index with reserved fields _fts/_ftsx not allowed');
    if (v === 'text') {
      if (phase === 'suffix') throw cannotCreate("'text' fields in index must all be adjacent");
      if (phase === 'prefix') Object.assign(fixed, { _fts: 'text', _ftsx: 1 });
      phase = 'text';
      weights.set(field, 1);
      continue;
    }
    if (toNumber(v) !== 1 && toNumber(v) !== -1) throw cannotCreate('expected value 1 or -1 for non-text key in compound index');
    if (phase === 'text') phase = 'suffix';
    fixed[field] = v;
  }
  if (spec.weights !== undefined) {
    if (spec.weights === '$**') weights.set('$**', 1);
    else if (!isPlainObject(spec.weights)) throw cannotCreate("text index option 'weights' must be an object");
    else
      for (const [f, w] of Object.entries(spec.weights)) {
        if (typeof w !== 'number' && !(w as { _bsontype?: string })?._bsontype) throw cannotCreate('weight for text index needs numeric type');
        weights.set(f, Math.trunc(toNumber(w)));
      }
  }
  if (weights.size === 0) throw cannotCreate("text index option 'weights' must specify fields or the wildcard");
  for (const [f, w] of weights) {
    if (w <= 0 || w >= MAX_WEIGHT) throw cannotCreate(`text index weight must be in the exclusive interval (0,${MAX_WEIGHT}) but found: ${w}`);
    if (f !== '$**' && f.split('.').some((p) => !p || p.startsWith('$'))) throw cannotCreate(`invalid text index weight field: ${f}`);
  }
  const language = spec.default_language ?? 'english';
  if (typeof language !== 'string') throw cannotCreate('default_language needs a string type');
  try {
    textLanguage(language, 'default_language');
  } catch {
    throw cannotCreate(`default_language is not valid: ${language} (the embedded engine supports english and none)`);
  }
  const override = spec.language_override ?? 'language';
  if (typeof override !== 'string' || !override || override.startsWith('$')) throw cannotCreate('language_override is not valid');
  const version = spec.textIndexVersion === undefined ? 3 : toNumber(spec.textIndexVersion);
  if (version !== 3 && version !== 2) throw cannotCreate(`bad textIndexVersion: ${String(spec.textIndexVersion)}`);
  const sortedWeights: Document = {};
  for (const f of [...weights.keys()].sort()) sortedWeights[f] = weights.get(f);
  // The spec keeps its field order; the text options it lacks follow.
  const fixedOptions: Document = { key: fixed, weights: sortedWeights, default_language: language, language_override: override, textIndexVersion: version };
  const out: Document = {};
  for (const [k, v] of Object.entries(spec)) out[k] = k in fixedOptions ? fixedOptions[k] : v;
  return { ...out, ...fixedOptions };
}

export class TextIndex {
  readonly kind = 'text' as const;
  readonly name: string;
  readonly unique = false;
  readonly expireAfterSeconds = undefined;
  /** Key fields before `_fts`: a `$text` query needs equality conditions on them. */
  readonly prefixFields: string[];
  readonly defaultLanguage: TextLanguage;
  private readonly weights: [string, number][];
  private readonly wildcard: number | undefined;
  private readonly languageOverride: string;
  private readonly partial: Matcher | null;
  /** term → (document key → score of the term in that document). */
  private readonly postings = new Map<string, Map<string, number>>();

  constructor(readonly spec: Document) {
    this.name = spec.name as string;
    const keys = Object.keys(spec.key as Document);
    this.prefixFields = keys.slice(0, keys.indexOf('_fts'));
    const weights = spec.weights as Document;
    this.wildcard = weights['$**'] as number | undefined;
    this.weights = Object.entries(weights).filter(([f]) => f !== '$**') as [string, number][];
    this.defaultLanguage = textLanguage(spec.default_language, 'default_language');
    this.languageOverride = spec.language_override as string;
    this.partial = spec.partialFilterExpression ? compileFilter(spec.partialFilterExpression as Document) : null;
  }

  get fields(): string[] {
    return this.weights.map(([f]) => f);
  }

  /** The indexed strings of a document with their weights. */
  private texts(doc: Document): [string, number][] {
    const out: [string, number][] = [];
    const explicit = new Set(this.weights.map(([f]) => f));
    for (const [field, weight] of this.weights) collectStrings(doc, field.split('.'), (s) => out.push([s, weight]));
    if (this.wildcard !== undefined) collectAll(doc, '', (path, s) => explicit.has(path) || out.push([s, this.wildcard!]));
    return out;
  }

  private languageOf(doc: Document): TextLanguage {
    const lang = doc[this.languageOverride];
    return lang === undefined ? this.defaultLanguage : textLanguage(lang, 'language override');
  }

  /** `[term, score]` pairs of a document, sorted by term; null when it has no indexed text (text indexes are sparse). */
  keysOf(doc: Document): unknown[][] | null {
    if (this.partial && !this.partial.test(doc)) return null;
    const language = this.languageOf(doc);
    const scores = new Map<string, number>();
    for (const [text, weight] of this.texts(doc)) scoreText(text, weight, language, scores);
    if (scores.size === 0) return null;
    return [...scores.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  }

  add(_doc: Document, ik: string, keys: unknown[][] | null): void {
    for (const [term, score] of keys ?? []) {
      let docs = this.postings.get(term as string);
      if (!docs) this.postings.set(term as string, (docs = new Map()));
      docs.set(ik, score as number);
    }
  }

  remove(doc: Document, ik: string): void {
    for (const [term] of this.keysOf(doc) ?? []) {
      const docs = this.postings.get(term as string);
      docs?.delete(ik);
      if (docs?.size === 0) this.postings.delete(term as string);
    }
  }

  conflict(): null {
    return null;
  }

  duplicateKeyError(): MongoCommandError {
    return new MongoCommandError(1, 'text indexes are never unique');
  }

  /** Candidate documents of a query (any of its terms) with their scores (sum over the query's terms). */
  candidates(q: TextQuery): Map<string, number> {
    const out = new Map<string, number>();
    // The index holds folded terms; case- or diacritic-sensitive queries are checked against the text in `accepts`.
    const folded = new Set(q.terms.map((t) => foldText(t)));
    for (const term of folded) for (const [ik, score] of this.postings.get(term) ?? []) out.set(ik, (out.get(ik) ?? 0) + score);
    return out;
  }

  /** Phrase and negation checks on a candidate. */
  accepts(doc: Document, q: TextQuery): boolean {
    const sensitive = q.caseSensitive || q.diacriticSensitive;
    if (!sensitive && !q.phrases.length && !q.negatedPhrases.length && !q.negatedTerms.length) return true;
    const text = this.texts(doc).map(([s]) => s).join('\n');
    if (sensitive && q.terms.length) {
      const exact = new Set(terms(text, q.language, q.caseSensitive, q.diacriticSensitive));
      if (!q.terms.some((t) => exact.has(t))) return false;
    }
    if (!q.phrases.every((p) => containsPhrase(text, p, q))) return false;
    if (q.negatedPhrases.some((p) => containsPhrase(text, p, q))) return false;
    if (q.negatedTerms.length) {
      const present = new Map<string, number>();
      for (const [s, w] of this.texts(doc)) scoreText(s, w, q.language, present);
      if (q.negatedTerms.some((t) => present.has(t))) return false;
    }
    return true;
  }
}

/** Strings at a path, through arrays and subdocuments. */
function collectStrings(value: unknown, parts: string[], emit: (s: string) => void): void {
  if (Array.isArray(value)) {
    for (const v of value) collectStrings(v, parts, emit);
    return;
  }
  if (parts.length === 0) {
    if (typeof value === 'string') emit(value);
    return;
  }
  if (isPlainObject(value)) collectStrings(value[parts[0]], parts.slice(1), emit);
}

/** Every string of a document with its field path (array positions omitted), for wildcard text indexes. */
function collectAll(value: unknown, path: string, emit: (path: string, s: string) => void): void {
  if (typeof value === 'string') emit(path, value);
  else if (Array.isArray(value)) for (const v of value) collectAll(v, path, emit);
  else if (isPlainObject(value)) for (const [k, v] of Object.entries(value)) collectAll(v, path ? `${path}.${k}` : k, emit);
}
