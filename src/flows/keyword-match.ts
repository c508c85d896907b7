/** Letters, digits and the underscore make up words; anything else separates them. */
const WORD_CHAR = /^[\p{L}\p{N}_]$/u;
const WORD_RUNS = /[\p{L}\p{N}_]+/gu;

/** How much of a message a trigger looks at: bounded, so no message costs more than this to match. */
export const MAX_SCANNED_CHARS = 2048;

/** How keywords are stored: trimmed, inner spaces collapsed, lower-cased, without duplicates or blanks. */
export function normalizeKeywords(keywords: readonly string[]): string[] {
  const normalized = keywords.map((keyword) => keyword.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase());
  return [...new Set(normalized.filter((keyword) => keyword.length > 0))];
}

/** A keyword ready to match: the phrase, whether a word boundary is needed at either end, and its words. */
export interface CompiledKeyword {
  phrase: string;
  boundedStart: boolean;
  boundedEnd: boolean;
  words: string[];
}

/** A message's text as triggers see it: normalized like keywords, white space collapsed, bounded, and its words. */
export interface ScannedText {
  text: string;
  words: Set<string>;
}

const isWordChar = (char: string | undefined): boolean => char !== undefined && WORD_CHAR.test(char);

/** The character ending just before `index` (a whole surrogate pair when there is one). */
function charBefore(text: string, index: number): string | undefined {
  if (index === 0) return undefined;
  const code = text.charCodeAt(index - 1);
  const start = code >= 0xdc00 && code <= 0xdfff && index >= 2 ? index - 2 : index - 1;
  return String.fromCodePoint(text.codePointAt(start)!);
}

function charAt(text: string, index: number): string | undefined {
  return index < text.length ? String.fromCodePoint(text.codePointAt(index)!) : undefined;
}

/** Compiles stored (normalized) keywords: done once per saved version of a flow, not per message. */
export function compileKeywords(keywords: readonly string[]): CompiledKeyword[] {
  return normalizeKeywords(keywords).map((phrase) => ({
    phrase,
    boundedStart: isWordChar(charAt(phrase, 0)),
    boundedEnd: isWordChar(charBefore(phrase, phrase.length)),
    words: phrase.match(WORD_RUNS) ?? [],
  }));
}

/** Prepares a message's text once for every trigger it is matched against. */
export function scanText(text: string): ScannedText {
  const normalized = text.slice(0, MAX_SCANNED_CHARS).normalize('NFC').toLowerCase().replace(/\s+/g, ' ');
  return { text: normalized, words: new Set(normalized.match(WORD_RUNS) ?? []) };
}

/**
 * True when the text contains the keyword as a whole word or phrase: "price" matches "Price?" and "the price
 * is", not "prices" or "overpriced"; the spaces of a phrase match any run of white space. A keyword that starts
 * or ends with a non-word character ("c++") needs no boundary there. Every word of a matching keyword is a whole
 * word of the text, so most keywords are ruled out by a set lookup; the rest cost one linear search each.
 */
export function containsCompiled(scanned: ScannedText, keyword: CompiledKeyword): boolean {
  if (!keyword.words.every((word) => scanned.words.has(word))) return false;
  const { text } = scanned;
  for (let at = text.indexOf(keyword.phrase); at !== -1; at = text.indexOf(keyword.phrase, at + 1)) {
    const end = at + keyword.phrase.length;
    if (keyword.boundedStart && isWordChar(charBefore(text, at))) continue;
    if (keyword.boundedEnd && isWordChar(charAt(text, end))) continue;
    return true;
  }
  return false;
}

/** An inbound message triggers a flow with no keywords always, otherwise when one keyword is contained. */
export function triggers(scanned: ScannedText | null, keywords: readonly CompiledKeyword[]): boolean {
  if (keywords.length === 0) return true;
  return scanned !== null && keywords.some((keyword) => containsCompiled(scanned, keyword));
}

/** `keyword` in `text`, compiled on the spot (tests and one-off checks). */
export function containsKeyword(text: string, keyword: string): boolean {
  const [compiled] = compileKeywords([keyword]);
  return compiled !== undefined && containsCompiled(scanText(text), compiled);
}

/** `triggers`, compiling on the spot (tests and one-off checks). */
export function matchesTrigger(text: string | null, keywords: readonly string[]): boolean {
  return triggers(text === null ? null : scanText(text), compileKeywords(keywords));
}
