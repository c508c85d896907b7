import { escapeRegExp } from '../common/escape-regexp.js';

/** Letters, digits and the underscore make up words; anything else separates them. */
const WORD_CHAR = String.raw`[\p{L}\p{N}_]`;

/** How keywords are stored: trimmed, inner spaces collapsed, lower-cased, without duplicates or blanks. */
export function normalizeKeywords(keywords: readonly string[]): string[] {
  const normalized = keywords.map((keyword) => keyword.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase());
  return [...new Set(normalized.filter((keyword) => keyword.length > 0))];
}

/**
 * True when `text` contains `keyword` as a whole word or phrase, ignoring case: "price" matches
 * "Price?" and "the price is", not "prices" or "overpriced"; the spaces of a phrase match any run of
 * white space. A keyword that starts or ends with a non-word character ("c++") needs no boundary there.
 */
export function containsKeyword(text: string, keyword: string): boolean {
  const words = normalizeKeywords([keyword])[0];
  if (!words) return false;
  const body = words.split(' ').map(escapeRegExp).join(String.raw`\s+`);
  const start = /^[\p{L}\p{N}_]/u.test(words) ? `(?<!${WORD_CHAR})` : '';
  const end = /[\p{L}\p{N}_]$/u.test(words) ? `(?!${WORD_CHAR})` : '';
  return new RegExp(`${start}${body}${end}`, 'iu').test(text.normalize('NFC'));
}

/** An inbound message triggers a flow with no keywords always, otherwise when one keyword is contained. */
export function matchesTrigger(text: string | null, keywords: readonly string[]): boolean {
  if (keywords.length === 0) return true;
  return text !== null && keywords.some((keyword) => containsKeyword(text, keyword));
}
