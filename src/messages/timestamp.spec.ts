import { describe, expect, it } from '@jest/globals';
import { parseTimestamp } from './timestamp.js';

describe('parseTimestamp', () => {
  it.each([
    ['1714557600000', '2024-05-01T10:00:00.000Z'],
    ['0', '1970-01-01T00:00:00.000Z'],
    ['2024-05-01T10:00:00Z', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00Z', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T10:00:00.250Z', '2024-05-01T10:00:00.250Z'],
    ['2024-05-01T12:00:00+02:00', '2024-05-01T10:00:00.000Z'],
    ['2024-05-01T05:30:00.5-04:30', '2024-05-01T10:00:00.500Z'],
    ['2024-05-01', '2024-05-01T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
  ])('reads %s', (value, expected) => {
    expect(parseTimestamp(value)?.toISOString()).toBe(expected);
  });

  it.each([
    ['a time without a zone (it would be the server’s local time)', '2024-05-01T10:00:00'],
    ['an impossible calendar date', '2024-02-30'],
    ['an impossible month', '2024-13-01'],
    ['an impossible hour', '2024-05-01T25:00:00Z'],
    ['an offset without a colon', '2024-05-01T10:00:00+0200'],
    ['a negative number', '-1'],
    ['a decimal number', '1714557600000.5'],
    ['epoch milliseconds beyond the largest date', '9999999999999999'],
    ['words', 'yesterday'],
    ['an empty string', ''],
    ['a date in another notation', '05/01/2024'],
    ['trailing garbage', '2024-05-01T10:00:00Zjunk'],
  ])('refuses %s', (_, value) => {
    expect(parseTimestamp(value)).toBeNull();
  });
});
