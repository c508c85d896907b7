/**
 * A text index: an inverted index from (prefix values, term) to the documents holding the term (query/text-search.ts).
 * The postings of a compound index are kept per value of its prefix fields, as MongoDB's keys lead with them, so a
 * `$text` query, which must give equality conditions on the prefix fields, reads only its own prefix's documents
 * (a company's messages, not every company's). Suffix fields are kept in the spec only. One text index per collection.
 * Scores are computed from a document's text when a query asks for them (query/text-plan.ts), not stored.
 */
import type { Document } from 'bson';
import { idKey, isPlainObject, toNumber } from '../bson-values.js';
import { MongoCommandError } from '../errors.js';
import { compileFilter, type Matcher } from '../query/mingo.js';
import { pathValues } from '../query/paths.js';
import { scoreText, terms, textLanguage, type TextLanguage } from '../query/text-search.js';
import { filterFields } from './secondary-index.js';

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

/** The key of one prefix's postings: the prefix fields' values, canonical (`1` and `1.0` alike). */
export const prefixKeyOf = (values: unknown[]): string => values.map((v) => idKey(v ?? null)).join('\u0001');

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
  /** The top-level fields its keys are made of (see SecondaryIndex.reads); null for a wildcard text index. */
  readonly reads: ReadonlySet<string> | null;
  /** `<prefix key>\u0000<term>` → keys of the documents holding the term. */
  private readonly postings = new Map<string, Set<string>>();

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
    const reads = new Set([...this.prefixFields, ...this.weights.map(([f]) => f)].map((f) => f.split('.')[0]));
    reads.add(this.languageOverride);
    const whole = this.wildcard !== undefined || (spec.partialFilterExpression !== undefined && !filterFields(spec.partialFilterExpression as Document, reads));
    this.reads = whole ? null : reads;
  }

  get fields(): string[] {
    return this.weights.map(([f]) => f);
  }

  /** The indexed strings of a document with their weights: each string value (array elements one by one). */
  texts(doc: Document): [string, number][] {
    const out: [string, number][] = [];
    const explicit = new Set(this.weights.map(([f]) => f));
    for (const [field, weight] of this.weights) collectStrings(doc, field.split('.'), (s) => out.push([s, weight]));
    if (this.wildcard !== undefined) collectAll(doc, '', (path, s) => explicit.has(path) || out.push([s, this.wildcard!]));
    return out;
  }

  languageOf(doc: Document): TextLanguage {
    const lang = doc[this.languageOverride];
    return lang === undefined ? this.defaultLanguage : textLanguage(lang, 'language override');
  }

  /** The prefix fields' values of a document; an array there is refused, as MongoDB refuses a multikey prefix. */
  private prefixValues(doc: Document): unknown[] {
    return this.prefixFields.map((field) => {
      const { values, multikey } = pathValues(doc, field.split('.'));
      if (multikey) throw new MongoCommandError(16675, `cannot have a multi-key as a prefix to a text index: ${field}`);
      return values[0] ?? null;
    });
  }

  /**
   * What the index reads of a document, as one key tuple (prefix values, language, indexed strings): equal tuples
   * index alike, so an update that leaves them as they were costs no tokenizing. Null when the document has no
   * indexed string (text indexes are sparse) or is outside a partial index.
   */
  keysOf(doc: Document): unknown[][] | null {
    if (this.partial && !this.partial.test(doc)) return null;
    const prefix = this.prefixValues(doc);
    const language = this.languageOf(doc);
    const texts = this.texts(doc).map(([text]) => text);
    return texts.length ? [[...prefix, language, ...texts]] : null;
  }

  /** The distinct terms of a document, for its prefix. */
  private termsOf(doc: Document): Set<string> {
    const language = this.languageOf(doc);
    const found = new Set<string>();
    for (const [text] of this.texts(doc)) for (const term of terms(text, language)) found.add(term);
    return found;
  }

  /** Each term's score in a document (MongoDB's per-field formula, summed over fields). */
  termScores(doc: Document): Map<string, number> {
    const language = this.languageOf(doc);
    const scores = new Map<string, number>();
    for (const [text, weight] of this.texts(doc)) scoreText(text, weight, language, scores);
    return scores;
  }

  add(doc: Document, ik: string, keys: unknown[][] | null): void {
    if (!keys) return;
    const prefix = prefixKeyOf(this.prefixValues(doc));
    for (const term of this.termsOf(doc)) {
      const key = `${prefix}\u0000${term}`;
      let docs = this.postings.get(key);
      if (!docs) this.postings.set(key, (docs = new Set()));
      docs.add(ik);
    }
  }

  remove(doc: Document, ik: string, keys = this.keysOf(doc)): void {
    if (!keys) return;
    const prefix = prefixKeyOf(this.prefixValues(doc));
    for (const term of this.termsOf(doc)) {
      const key = `${prefix}\u0000${term}`;
      const docs = this.postings.get(key);
      docs?.delete(ik);
      if (docs?.size === 0) this.postings.delete(key);
    }
  }

  /** The documents of one prefix holding `term` (a folded, stemmed index term). */
  holding(prefixKey: string, term: string): ReadonlySet<string> {
    return this.postings.get(`${prefixKey}\u0000${term}`) ?? EMPTY;
  }

  conflict(): null {
    return null;
  }

  duplicateKeyError(): MongoCommandError {
    return new MongoCommandError(1, 'text indexes are never unique');
  }
}

const EMPTY: ReadonlySet<string> = new Set();

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
