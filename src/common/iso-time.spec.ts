import { describe, expect, it } from '@jest/globals';
import { isoTime } from './iso-time.js';

describe('isoTime', () => {
  it('writes what toISOString writes', () => {
    const times = [0, 1, 999, 1714557600000, 1714557600123, -1, -62135596800000, 253402300799999, 253402300800000, -62198755200001, 8.64e15, -8.64e15];
    for (let t = -2e12; t < 5e12; t += 7_919_123_457) times.push(t);
    for (const t of times) expect(isoTime(new Date(t))).toBe(new Date(t).toISOString());
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});
