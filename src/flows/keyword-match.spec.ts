import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { CRAFTED, CRAFTED_FLOWS } from '../../drill/lib/crafted-flows.mjs';
import { compileKeywords, containsKeyword, KeywordIndex, MAX_SCANNED_CHARS, matchesTrigger, normalizeKeywords, scanText } from './keyword-match.js';

describe('containsKeyword', () => {
  it.each([
    ['What is the price?', 'price', true],
    ['PRICE', 'price', true],
    ['price list please', 'Price', true],
    ['the prices went up', 'price', false],
    ['overpriced', 'price', false],
    ['price_list', 'price', false],
    ['What are your opening   hours?', 'opening hours', true],
    ['opening\nhours', 'Opening Hours', true],
    ['opening times and hours', 'opening hours', false],
    ['Un café, por favor', 'CAFÉ', true],
    ['cafés', 'café', false],
    ['I write C++ daily', 'c++', true],
    ['I write C+++ daily', 'c++', true],
    ['cost: $5 (approx.)', '(approx.)', true],
    ['a.b', 'a.b', true],
    ['axb', 'a.b', false],
    ['order 42 arrived', '42', true],
    ['order 420 arrived', '42', false],
    ['anything', '   ', false],
    ['𝒜pple pie', 'pple', false],
    ['I ❤ pie', '❤', true],
    ['pie😀', 'pie', true],
  ])('%j contains %j: %s', (text, keyword, expected) => {
    expect(containsKeyword(text, keyword)).toBe(expected);
  });
});

describe('matchesTrigger', () => {
  it('matches every message when there are no keywords, even one without text', () => {
    expect(matchesTrigger('hello', [])).toBe(true);
    expect(matchesTrigger(null, [])).toBe(true);
  });

  it('needs one of the keywords otherwise', () => {
    expect(matchesTrigger('I want a refund', ['pricing', 'refund'])).toBe(true);
    expect(matchesTrigger('hello there', ['pricing', 'refund'])).toBe(false);
    expect(matchesTrigger(null, ['pricing'])).toBe(false);
  });
});

describe('normalizeKeywords', () => {
  it('trims, collapses spaces, lower-cases, and drops blanks and duplicates', () => {
    expect(normalizeKeywords([' Pricing ', 'pricing', 'Opening  Hours', '  '])).toEqual(['pricing', 'opening hours']);
  });
});

describe('the text a trigger scans', () => {
  it(`is the first ${MAX_SCANNED_CHARS} characters of the message`, () => {
    const padding = 'x '.repeat(MAX_SCANNED_CHARS / 2);
    expect(containsKeyword(`${padding.slice(0, -8)} refund`, 'refund')).toBe(true);
    expect(containsKeyword(`${padding} refund`, 'refund')).toBe(false);
  });

  it('rules keywords out by their words before searching, without changing what matches', () => {
    expect(matchesTrigger('the price is right', ['price is', 'is right'])).toBe(true);
    expect(matchesTrigger('the price list', ['price is'])).toBe(false);
    expect(matchesTrigger('prices, as is', ['price is'])).toBe(false);
  });
});

/**
 * The rule as it was first written, by substring search: the keyword's normalized phrase found in the normalized
 * text with no word character right before it (when it starts with one) nor right after it (when it ends with one).
 */
function reference(text: string, keyword: string): boolean {
  const word = /^[\p{L}\p{N}_]$/u;
  const [phrase] = normalizeKeywords([keyword]);
  if (phrase === undefined) return false;
  const haystack = text.slice(0, MAX_SCANNED_CHARS).normalize('NFC').toLowerCase().replace(/\s+/g, ' ');
  const chars = (value: string) => [...value];
  const isWord = (char: string | undefined) => char !== undefined && word.test(char);
  const [first, last] = [chars(phrase)[0], chars(phrase).at(-1)];
  for (let at = haystack.indexOf(phrase); at !== -1; at = haystack.indexOf(phrase, at + 1)) {
    const before = chars(haystack.slice(0, at)).at(-1);
    const after = chars(haystack.slice(at + phrase.length))[0];
    if (isWord(first) && isWord(before)) continue;
    if (isWord(last) && isWord(after)) continue;
    return true;
  }
  return false;
}

describe('matching by tokens', () => {
  it('agrees with substring search and word boundaries on 20 000 random texts and keywords', () => {
    const alphabet = ['a', 'b', 'A', ' ', '  ', '\n', '.', '+', '_', '1', 'é', 'e\u0301', 'É', '😀', '-'];
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const draw = (length: number) => Array.from({ length }, () => alphabet[random(alphabet.length)]).join('');
    let disagreements = 0;
    let matches = 0;
    for (let i = 0; i < 20_000; i += 1) {
      const text = draw(1 + random(30));
      const keyword = draw(1 + random(5));
      const expected = reference(text, keyword);
      if (containsKeyword(text, keyword) !== expected) disagreements += 1;
      if (expected) matches += 1;
    }
    expect(disagreements).toBe(0);
    expect(matches).toBeGreaterThan(1_000);
  });

  it('matches a message against many flows at once: those whose keyword it contains, and those without keywords', () => {
    const index = new KeywordIndex([compileKeywords(['refund']), compileKeywords([]), compileKeywords(['opening hours', 'c++']), compileKeywords(['price'])]);
    expect([...index.matching(scanText('When do you open? Opening\thours please, and a REFUND.'))].sort()).toEqual([0, 1, 2]);
    expect([...index.matching(scanText('I code in C++'))].sort()).toEqual([1, 2]);
    expect([...index.matching(scanText('prices'))]).toEqual([1]);
    expect([...index.matching(null)]).toEqual([1]);
  });
});

describe('the cost of matching, whatever the keywords', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it.each(Object.keys(CRAFTED))('%s: 5 000 crafted keywords cost lookups per token of the message, not a search per keyword', (kind) => {
    const { message, keywords } = CRAFTED[kind as keyof typeof CRAFTED];
    const index = new KeywordIndex(Array.from({ length: CRAFTED_FLOWS }, (_, flow) => compileKeywords(keywords(flow))));
    const scanned = scanText(message);
    const searches = jest.spyOn(String.prototype, 'indexOf');
    const lookups = jest.spyOn(Map.prototype, 'get');
    expect(index.matching(scanned).size).toBe(0);
    expect(searches).not.toHaveBeenCalled();
    // a lookup of the token's keyword lengths per token, and of a keyword by its hash only where a filter bit said so
    expect(lookups.mock.calls.length).toBeLessThan(2 * scanned.tokens.length);
  });
});
