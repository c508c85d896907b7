/**
 * Text search as MongoDB's text index version 3 does it (`src/mongo/db/fts`):
 * - Tokens: text is split at the delimiters of Unicode's Dash, Hyphen, Pattern_Syntax, Quotation_Mark,
 *   Terminal_Punctuation and White_Space properties; everything else (letters, digits, `_`, symbols such as `€`, emoji)
 *   belongs to a word. For English the ASCII apostrophe is part of a word (the stemmer then drops `'s`).
 * - Each token is case-folded (simple case folding) and stripped of diacritics (the code points of Unicode's
 *   Diacritic property), unless the query asks to keep case or diacritics; English stop words are dropped (tested on
 *   the lower-cased token) and the rest stemmed (Porter2). Language `none`: no stop words, no stemming.
 * - Scores per field (MongoDB's formula): term frequency with diminishing returns for repeats, a coefficient for the
 *   share of the field's words, a small boost when the term is the whole field, times the field's weight.
 * - A `$search` string is read by MongoDB's own query parser: `"phrases"`, `-negations` that last until the next
 *   whitespace, an unterminated quote adds its words as terms but no phrase.
 * - A phrase matches a field's text as a substring, after the same case and diacritic folding.
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

/** Unicode's Hyphen property, which JavaScript's regular expressions do not know (most of it is also Dash). */
const HYPHENS = String.raw`\u002d\u00ad\u058a\u1806\u2010\u2011\u2e17\u30fb\ufe63\uff0d\uff65`;
const DELIMITER = new RegExp(`[\\p{White_Space}\\p{Dash}\\p{Pattern_Syntax}\\p{Quotation_Mark}\\p{Terminal_Punctuation}${HYPHENS}]`, 'u');
const ASCII = /^[\x00-\x7f]*$/;
/** The two Diacritic code points of ASCII (`^`, `` ` ``). */
const ASCII_DIACRITICS = /[\^`]/g;
/** Which ASCII characters delimit words (the apostrophe is decided by the language). */
const ASCII_DELIMITERS = Uint8Array.from({ length: 128 }, (_, code) => (DELIMITER.test(String.fromCharCode(code)) ? 1 : 0));
const delimiters = new Map<string, boolean>();

const isDelimiter = (c: string, english: boolean): boolean => {
  if (c === "'") return !english;
  const code = c.charCodeAt(0);
  if (c.length === 1 && code < 0x80) return ASCII_DELIMITERS[code] === 1;
  let found = delimiters.get(c);
  if (found === undefined) delimiters.set(c, (found = DELIMITER.test(c)));
  return found;
};

export interface FoldOptions {
  caseSensitive?: boolean;
  diacriticSensitive?: boolean;
}

const caseFolds = new Map<string, string>();
const diacriticFolds = new Map<string, string>();

/** Simple case folding of one code point (a full mapping that would change its length leaves it as it is). */
function foldCase(c: string): string {
  let folded = caseFolds.get(c);
  if (folded === undefined) {
    const lower = c.toLowerCase();
    const upper = lower.toUpperCase();
    const back = upper.toLowerCase();
    folded = [...back].length === 1 && [...upper].length === 1 ? back : [...lower].length === 1 ? lower : c;
    caseFolds.set(c, folded);
  }
  return folded;
}

/** One code point without its diacritics: a diacritic mark itself becomes empty, a precomposed letter its base. */
function stripDiacritics(c: string): string {
  let stripped = diacriticFolds.get(c);
  if (stripped === undefined) {
    stripped = c.normalize('NFD').replace(/\p{Diacritic}/gu, '').normalize('NFC');
    diacriticFolds.set(c, stripped);
  }
  return stripped;
}

/** Case and diacritics folded away, as version 3 compares words and phrases (unless the query keeps them). */
export function foldText(s: string, options: FoldOptions = {}): string {
  if (ASCII.test(s)) {
    const cased = options.caseSensitive ? s : s.toLowerCase();
    return options.diacriticSensitive ? cased : cased.replace(ASCII_DIACRITICS, '');
  }
  let out = '';
  for (const c of s) {
    const cased = options.caseSensitive ? c : foldCase(c);
    out += options.diacriticSensitive ? cased : stripDiacritics(cased);
  }
  return out;
}

/** The raw tokens of `text`: runs of non-delimiters, as written. */
export function tokens(text: string, language: TextLanguage): string[] {
  const english = language === 'english';
  const out: string[] = [];
  if (ASCII.test(text)) {
    let start = -1;
    for (let i = 0; i <= text.length; i++) {
      const code = text.charCodeAt(i);
      const delimiter = i === text.length || (code === 0x27 ? !english : ASCII_DELIMITERS[code] === 1);
      if (delimiter) {
        if (start >= 0) out.push(text.slice(start, i));
        start = -1;
      } else if (start < 0) start = i;
    }
    return out;
  }
  let current = '';
  for (const c of text) {
    if (isDelimiter(c, english)) {
      if (current) out.push(current);
      current = '';
    } else current += c;
  }
  if (current) out.push(current);
  return out;
}

/** The index terms of a text: its tokens folded, without stop words, stemmed (English). */
export function terms(text: string, language: TextLanguage, options: FoldOptions = {}): string[] {
  const out: string[] = [];
  for (const token of tokens(text, language)) {
    const word = foldText(token, options);
    if (!word) continue;
    if (language === 'none') {
      out.push(word);
      continue;
    }
    const lower = options.caseSensitive ? foldText(token, { diacriticSensitive: options.diacriticSensitive }) : word;
    if (STOP_WORDS.has(lower)) continue;
    out.push(options.caseSensitive ? word.slice(0, stem(lower).length) : stem(word));
  }
  return out;
}

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
  /** The terms the index is read for (folded, stemmed; phrase words included): a match holds at least one. */
  terms: string[];
  /** The positive terms under the query's case and diacritic sensitivity (the same as `terms` when insensitive). */
  exactTerms: string[];
  negatedTerms: string[];
  phrases: string[];
  negatedPhrases: string[];
  language: TextLanguage;
  caseSensitive: boolean;
  diacriticSensitive: boolean;
}

/** MongoDB's FTSQueryParser: whitespace is these five characters only (a tab belongs to the text). */
const QUERY_WHITESPACE = new Set(['\n', '\v', '\f', '\r', ' ']);

/**
 * Reads a `$search` string as MongoDB's FTSQueryImpl does: the words outside and inside phrases go to the positive
 * terms, those after a `-` (up to the next whitespace) to the negated ones; a `-` only negates after whitespace (or at
 * the start), so `foo-bar` is two positive words; the words of a negated phrase go nowhere.
 */
function parseSearch(search: string): { positive: string; negative: string; phrases: string[]; negatedPhrases: string[] } {
  let positive = '';
  let negative = '';
  const phrases: string[] = [];
  const negatedPhrases: string[] = [];
  let inNegation = false;
  let inPhrase = false;
  let quoteOffset = 0;
  let pos = 0;
  const skipWhitespace = () => {
    const start = pos;
    while (pos < search.length && QUERY_WHITESPACE.has(search[pos])) pos++;
    return pos > start;
  };
  skipWhitespace();
  let previousWhiteSpace = true;
  while (pos < search.length) {
    const start = pos;
    const c = search[pos++];
    const delimiter = c === '-' || c === '"';
    if (!delimiter) while (pos < search.length && !QUERY_WHITESPACE.has(search[pos]) && search[pos] !== '-' && search[pos] !== '"') pos++;
    const text = search.slice(start, pos);
    const afterWhitespace = previousWhiteSpace;
    previousWhiteSpace = skipWhitespace();
    if (!delimiter) {
      if (inPhrase && inNegation) continue;
      if (inNegation && afterWhitespace) inNegation = false;
      if (inNegation) negative += `${text} `;
      else positive += `${text} `;
    } else if (c === '-') {
      if (!inPhrase && afterWhitespace) inNegation = true;
    } else if (inPhrase) {
      (inNegation ? negatedPhrases : phrases).push(search.slice(quoteOffset + 1, start));
      inPhrase = false;
    } else {
      inPhrase = true;
      if (inNegation && afterWhitespace) inNegation = false;
      quoteOffset = start;
    }
  }
  return { positive, negative, phrases, negatedPhrases };
}

/** Parses a `$text` operand: `{ $search, $language?, $caseSensitive?, $diacriticSensitive? }`. */
export function parseTextQuery(spec: unknown, defaultLanguage: TextLanguage): TextQuery {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) throw badValue('$text expects an object');
  const s = spec as Document;
  for (const k of Object.keys(s))
    if (!['$search', '$language', '$caseSensitive', '$diacriticSensitive'].includes(k)) throw badValue(`extra fields in $text: ${k}`);
  if (typeof s.$search !== 'string') throw badValue('$search required and must be a string');
  for (const flag of ['$caseSensitive', '$diacriticSensitive'])
    if (s[flag] !== undefined && typeof s[flag] !== 'boolean') throw badValue(`${flag} requires a boolean value`);
  const language = s.$language === undefined ? defaultLanguage : textLanguage(s.$language, '$language');
  const caseSensitive = s.$caseSensitive === true;
  const diacriticSensitive = s.$diacriticSensitive === true;
  const parsed = parseSearch(s.$search);
  const sensitive = { caseSensitive, diacriticSensitive };
  const unique = (list: string[]) => [...new Set(list)];
  return {
    terms: unique(terms(parsed.positive, language)),
    exactTerms: unique(terms(parsed.positive, language, sensitive)),
    negatedTerms: unique(terms(parsed.negative, language, sensitive)),
    phrases: parsed.phrases,
    negatedPhrases: parsed.negatedPhrases,
    language,
    caseSensitive,
    diacriticSensitive,
  };
}

/** Whether one indexed string contains `phrase`, both folded as the query asks. */
export const containsPhrase = (text: string, phrase: string, q: TextQuery) => foldText(text, q).includes(foldText(phrase, q));
