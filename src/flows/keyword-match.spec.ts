import { describe, expect, it } from '@jest/globals';
import { containsKeyword, MAX_SCANNED_CHARS, matchesTrigger, normalizeKeywords } from './keyword-match.js';

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
