import { describe, expect, it } from '@jest/globals';
import { normalizePhone } from './phone-number.js';

describe('normalizePhone', () => {
  it.each([
    ['+1 (415) 555-2671', '+14155552671'],
    ['+1.415.555.2671', '+14155552671'],
    ['14155552671', '+14155552671'],
    ['  +44 20 7946 0958 ', '+442079460958'],
    ['0044 20 7946 0958', '+442079460958'],
    ['+33 6 12 34 56 78', '+33612345678'],
    ['+1 555 123 4567', '+15551234567'],
  ])('%j is %s', (raw, expected) => {
    expect(normalizePhone(raw)).toBe(expected);
  });

  it.each(['', '+', '+123', 'abc', 'call me', '+12345678901234567', '+1 415 555 2671 ext 3', '(415) 555-2671'])(
    '%j is not a phone number',
    (raw) => {
      expect(normalizePhone(raw)).toBeNull();
    },
  );
});
