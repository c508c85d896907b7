import { randomInt } from 'node:crypto';

/**
 * A text's tokens: its words (maximal runs of letters, digits and the underscore), and every other character
 * on its own (a space, a punctuation mark, an emoji).
 */
const TOKENS = /[\p{L}\p{N}_]+|[^]/gu;

/** How much of a message a trigger looks at: bounded, so no message costs more than this to match. */
export const MAX_SCANNED_CHARS = 2048;

/** How keywords are stored: trimmed, inner spaces collapsed, lower-cased, without duplicates or blanks. */
export function normalizeKeywords(keywords: readonly string[]): string[] {
  const normalized = keywords.map((keyword) => keyword.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase());
  return [...new Set(normalized.filter((keyword) => keyword.length > 0))];
}

/**
 * Phrases are found by hashing: each token gets a hash, each run of tokens the polynomial of its tokens' hashes,
 * both modulo a prime small enough that every product stays exact in a double (under 2^52). The bases are drawn
 * at random per process, so no one can write a message whose runs collide with a keyword's on purpose; a
 * collision by chance (about one in 67 million per comparison) only costs a token-by-token check.
 */
const MODULUS = 67_108_859; // the largest prime under 2^26
const CHAR_BASE = randomInt(1 << 16, MODULUS);
const TOKEN_BASE = randomInt(1 << 16, MODULUS);

function tokenHash(token: string): number {
  let hash = 0;
  for (let index = 0; index < token.length; index += 1) hash = (hash * CHAR_BASE + token.charCodeAt(index) + 1) % MODULUS;
  return hash;
}

function tokensOf(text: string): string[] {
  return text.match(TOKENS) ?? [];
}

/** A keyword ready to match: the phrase and its tokens, and the hash of its whole run of tokens. */
export interface CompiledKeyword {
  phrase: string;
  tokens: string[];
  hash: number;
}

/** Compiles stored (normalized) keywords: done once per saved version of a flow, not per message. */
export function compileKeywords(keywords: readonly string[]): CompiledKeyword[] {
  return normalizeKeywords(keywords).map((phrase) => {
    const tokens = tokensOf(phrase);
    let hash = 0;
    for (const token of tokens) hash = (hash * TOKEN_BASE + tokenHash(token)) % MODULUS;
    return { phrase, tokens, hash };
  });
}

/**
 * A message's text as triggers see it: normalized like keywords, white space collapsed, bounded; its tokens, and
 * the hashes of its prefixes of tokens (`prefixes[i]`: of the first i tokens), from which any run's hash is had
 * in constant time.
 */
export interface ScannedText {
  text: string;
  tokens: string[];
  prefixes: Float64Array;
}

/** Prepares a message's text once for every trigger it is matched against: one pass of a regular expression. */
export function scanText(text: string): ScannedText {
  const normalized = text.slice(0, MAX_SCANNED_CHARS).normalize('NFC').toLowerCase().replace(/\s+/g, ' ');
  const tokens = tokensOf(normalized);
  const prefixes = new Float64Array(tokens.length + 1);
  for (let index = 0; index < tokens.length; index += 1) prefixes[index + 1] = (prefixes[index] * TOKEN_BASE + tokenHash(tokens[index])) % MODULUS;
  return { text: normalized, tokens, prefixes };
}

/** TOKEN_BASE to the powers 0..n, modulo MODULUS. */
function powersUpTo(n: number): Float64Array {
  const powers = new Float64Array(n + 1);
  powers[0] = 1;
  for (let exponent = 1; exponent <= n; exponent += 1) powers[exponent] = (powers[exponent - 1] * TOKEN_BASE) % MODULUS;
  return powers;
}

interface IndexedKeyword {
  /** Which of the index's keyword sets (a flow's) it belongs to. */
  set: number;
  tokens: string[];
}

/** Bits of the index's filter per keyword: a run whose hash no keyword has is ruled out by one bit, 1 time in 32 wrongly. */
const FILTER_BITS_PER_KEYWORD = 32;

/**
 * The keywords of many sets (the active flows of a company), indexed so that one message is matched against all
 * of them at once: the message is tokenized once, then at each token every keyword length that some keyword
 * starting with that token has is tried, by the hash of the run of that many tokens there: a bit of a filter
 * first, then a map. The cost is the number of (token, length) pairs tried: at most 2 048 tokens times the
 * distinct lengths in tokens (at most 99) of the keywords starting with that token, whatever the number of
 * keywords and however they are written, each pair a few arithmetic operations; rather than one search of
 * the text per keyword, which crafted keywords and messages made cost 170 ms per message.
 *
 * A keyword is contained in a text when its tokens are a run of the text's tokens: as a whole word or phrase,
 * "price" matching "Price?" and "the price is", not "prices" or "overpriced" (one token "prices"); the spaces
 * of a phrase match any run of white space (both are collapsed to one space); a keyword that starts or ends
 * with a non-word character ("c++") needs no word boundary there, as its characters are tokens of their own.
 */
export class KeywordIndex {
  /** By the hash of their whole run of tokens: the keywords with that hash. */
  private readonly byHash = new Map<number, IndexedKeyword[]>();
  /** A bit per hash modulo its size, set for the hashes of keywords: most runs are ruled out here. */
  private readonly filter: Uint8Array;
  private readonly filterMask: number;
  /** By first token: the distinct lengths of the keywords starting with it, ascending. */
  private readonly lengthsByFirst = new Map<string, number[]>();
  private readonly powers: Float64Array;
  /** The sets that match every message: those without keywords. */
  private readonly unconditional: number[] = [];

  constructor(sets: ReadonlyArray<readonly CompiledKeyword[]>) {
    let longest = 0;
    let count = 0;
    sets.forEach((keywords, set) => {
      if (keywords.length === 0) this.unconditional.push(set);
      for (const { tokens, hash } of keywords) {
        count += 1;
        longest = Math.max(longest, tokens.length);
        const same = this.byHash.get(hash);
        if (same) same.push({ set, tokens });
        else this.byHash.set(hash, [{ set, tokens }]);
        const lengths = this.lengthsByFirst.get(tokens[0]);
        if (!lengths) this.lengthsByFirst.set(tokens[0], [tokens.length]);
        else if (!lengths.includes(tokens.length)) lengths.push(tokens.length);
      }
    });
    for (const lengths of this.lengthsByFirst.values()) lengths.sort((a, b) => a - b);
    this.powers = powersUpTo(longest);
    const bits = 2 ** Math.max(10, Math.ceil(Math.log2(count * FILTER_BITS_PER_KEYWORD + 1)));
    this.filter = new Uint8Array(bits / 8);
    this.filterMask = bits - 1;
    for (const hash of this.byHash.keys()) this.filter[(hash & this.filterMask) >>> 3] |= 1 << (hash & 7);
  }

  /** Which sets `scanned` triggers, by their index: those without keywords always, the others when one is contained. */
  matching(scanned: ScannedText | null): Set<number> {
    const matched = new Set(this.unconditional);
    if (scanned === null) return matched;
    const { tokens, prefixes } = scanned;
    const { powers, filter, filterMask } = this;
    for (let start = 0; start < tokens.length; start += 1) {
      const lengths = this.lengthsByFirst.get(tokens[start]);
      if (lengths === undefined) continue;
      const before = prefixes[start];
      for (const length of lengths) {
        const end = start + length;
        if (end > tokens.length) break;
        // The run's hash: prefixes[end] - before × TOKEN_BASE^length, modulo MODULUS (exact: every term is under 2^52).
        let hash = prefixes[end] - before * powers[length];
        hash -= Math.floor(hash / MODULUS) * MODULUS;
        // The quotient may be off by one where it rounds: bring the rest back into 0..MODULUS - 1.
        if (hash < 0) hash += MODULUS;
        else if (hash >= MODULUS) hash -= MODULUS;
        if ((filter[(hash & filterMask) >>> 3] & (1 << (hash & 7))) === 0) continue;
        for (const candidate of this.byHash.get(hash) ?? []) {
          if (!matched.has(candidate.set) && sameTokens(candidate.tokens, tokens, start)) matched.add(candidate.set);
        }
      }
    }
    return matched;
  }
}

function sameTokens(keyword: readonly string[], tokens: readonly string[], start: number): boolean {
  if (start + keyword.length > tokens.length) return false;
  for (let index = 0; index < keyword.length; index += 1) if (keyword[index] !== tokens[start + index]) return false;
  return true;
}

/** `keyword` in `text`, compiled on the spot (tests and one-off checks). */
export function containsKeyword(text: string, keyword: string): boolean {
  const compiled = compileKeywords([keyword]);
  return compiled.length > 0 && new KeywordIndex([compiled]).matching(scanText(text)).has(0);
}

/** Whether a message triggers a flow with these keywords, compiling on the spot (tests and one-off checks). */
export function matchesTrigger(text: string | null, keywords: readonly string[]): boolean {
  return new KeywordIndex([compileKeywords(keywords)]).matching(text === null ? null : scanText(text)).has(0);
}
