/**
 * Text search as MongoDB's text index version 3 does it: text is split into words at everything that is not a
 * letter, digit or (inside an English word) apostrophe, case-folded, stripped of diacritics, English stop words are
 * dropped and the rest stemmed (Porter2). A field's terms are scored with MongoDB's formula (term frequency with
 * diminishing returns for repeats, a coefficient for the share of the field's words, a small boost when the term is
 * the whole field, times the field's weight). A `$text` search string is parsed into terms, `"phrases"` and `-negations`.
 */
import type { Document } from 'bson';
import { badValue, MongoCommandError } from '../errors.js';
import { stem } from './stemmer.js';

/** MongoDB's English stop words. */
const STOP_WORDS = new Set(
  ("a about above after again against all am an and any are aren't as at be because been before being below between both but by can't cannot could couldn't " +
    "did didn't do does doesn't doing don't down during each few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here " +
    "here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor " +
    "not of off on once only or other ought our ours ourselves out over own same shan't she she'd she'll she's should shouldn't so some such than that " +
    "that's the their theirs them themselves then there there's these they they'd they'll they're they've this those through to too under until up very " +
    "was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's with won't would " +
    "wouldn't you you'd you'll you're you've your yours yourself yourselves").split(' '),
);

/** Languages the engine can index: English (stemmed, stop words) and none (words only). */
const LANGUAGES: Record<string, 'english' | 'none'> = { english: 'english', en: 'english', none: 'none' };

export type TextLanguage = 'english' | 'none';

export function textLanguage(name: unknown, what: string): TextLanguage {
  const lang = typeof name === 'string' ? LANGUAGES[name.toLowerCase()] : undefined;
  if (!lang) throw new MongoCommandError(17262, `${what} unsupported: ${String(name)} (the embedded engine supports english and none)`);
  return lang;
}

const WORD_CHAR = /[\p{L}\p{M}\p{N}]/u;
const APOSTROPHES = new Set(["'", '\u2019']);

/** Case and diacritics folded away, as text index version 3 compares words. */
export const foldText = (s: string, caseSensitive = false, diacriticSensitive = false): string => {
  const cased = caseSensitive ? s : s.toLowerCase();
  return diacriticSensitive ? cased : cased.normalize('NFD').replace(/\p{M}/gu, '');
};

/** The words of `text` (folded, apostrophes normalised), before stop words and stemming. */
export function words(text: string, language: TextLanguage, caseSensitive = false, diacriticSensitive = false): string[] {
  const folded = foldText(text, caseSensitive, diacriticSensitive);
  const out: string[] = [];
  let current = '';
  const chars = [...folded];
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    const inWord = WORD_CHAR.test(c) || (language === 'english' && APOSTROPHES.has(c) && current !== '' && WORD_CHAR.test(chars[i + 1] ?? ''));
    if (inWord) current += APOSTROPHES.has(c) ? "'" : c;
    else if (current) {
      out.push(current);
      current = '';
    }
  }
  if (current) out.push(current);
  return out;
}

/** The index terms of a text: words without stop words, stemmed (English). */
export function terms(text: string, language: TextLanguage, caseSensitive = false, diacriticSensitive = false): string[] {
  const ws = words(text, language, caseSensitive, diacriticSensitive);
  if (language === 'none') return ws;
  return ws.filter((w) => !STOP_WORDS.has(w.toLowerCase())).map((w) => (caseSensitive ? stemPreservingCase(w) : stem(w)));
}

/** Case-sensitive search stems the lower-cased word and keeps the original letters of the stem's length. */
const stemPreservingCase = (w: string) => w.slice(0, stem(w.toLowerCase()).length);

/** Adds the scores of one field's text to `scores` (term → score). */
export function scoreText(text: string, weight: number, language: TextLanguage, scores: Map<string, number>): void {
  const found = terms(text, language);
  if (found.length === 0) return;
  const perTerm = new Map<string, { count: number; freq: number; exp: number }>();
  for (const t of found) {
    const d = perTerm.get(t) ?? { count: 0, freq: 0, exp: 0 };
    d.exp = d.exp ? d.exp * 2 : 1;
    d.count += 1;
    d.freq += 1 / d.exp;
    perTerm.set(t, d);
  }
  for (const [t, d] of perTerm) {
    const coeff = (0.5 * d.count) / found.length + 0.5;
    const adjustment = text.length === t.length && text.toLowerCase() === t ? 1.1 : 1;
    scores.set(t, (scores.get(t) ?? 0) + weight * d.freq * coeff * adjustment);
  }
}

export interface TextQuery {
  /** Stemmed terms any of which makes a document a candidate (phrase words included). */
  terms: string[];
  negatedTerms: string[];
  phrases: string[];
  negatedPhrases: string[];
  language: TextLanguage;
  caseSensitive: boolean;
  diacriticSensitive: boolean;
}

/** Parses a `$text` operand: `{ $search, $language?, $caseSensitive?, $diacriticSensitive? }`. */
export function parseTextQuery(spec: unknown, defaultLanguage: TextLanguage): TextQuery {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) throw badValue('$text expects an object');
  const s = spec as Document;
  for (const k of Object.keys(s))
    if (!['$search', '$language', '$caseSensitive', '$diacriticSensitive'].includes(k)) throw badValue(`extra fields in $text: ${k}`);
  if (typeof s.$search !== 'string') throw badValue('$search required and must be a string');
  const language = s.$language === undefined ? defaultLanguage : textLanguage(s.$language, '$language');
  const caseSensitive = s.$caseSensitive === true;
  const diacriticSensitive = s.$diacriticSensitive === true;
  const q: TextQuery = { terms: [], negatedTerms: [], phrases: [], negatedPhrases: [], language, caseSensitive, diacriticSensitive };
  const search = s.$search;
  // Quoted phrases (a leading '-' negates one), then the remaining words ('-word' negates a word).
  const rest = search.replace(/(-?)"([^"]*)"?/g, (_m, neg: string, phrase: string) => {
    if (phrase.trim()) (neg ? q.negatedPhrases : q.phrases).push(phrase);
    if (!neg) q.terms.push(...terms(phrase, language, caseSensitive, diacriticSensitive));
    return ' ';
  });
  for (const token of rest.split(/\s+/).filter(Boolean)) {
    const negated = token.startsWith('-');
    const found = terms(negated ? token.slice(1) : token, language, caseSensitive, diacriticSensitive);
    (negated ? q.negatedTerms : q.terms).push(...found);
  }
  q.terms = [...new Set(q.terms)];
  return q;
}

/** Whether `text` (all indexed text of a document, joined) contains `phrase` under the query's sensitivity. */
export const containsPhrase = (text: string, phrase: string, q: TextQuery) =>
  foldText(text, q.caseSensitive, q.diacriticSensitive).includes(foldText(phrase, q.caseSensitive, q.diacriticSensitive));
