import { describe, expect, it } from '@jest/globals';
import { BadRequestException } from '@nestjs/common';
import { MAX_TAGS, mergeTags, normalizeTags } from './tags.js';

describe('tags', () => {
  it('trims, drops blank tags and repeats, keeping the first occurrence and the order', () => {
    expect(normalizeTags([' vip', 'billing ', 'vip', '', '   ', 'billing', 'VIP'])).toEqual(['vip', 'billing', 'VIP']);
    expect(normalizeTags([])).toEqual([]);
  });

  it('merges added tags after the current ones, normalized', () => {
    expect(mergeTags(['vip', 'sales'], [' sales', 'new ', ''])).toEqual(['vip', 'sales', 'new']);
  });

  it(`refuses a merge past ${MAX_TAGS} tags, counting repeats once`, () => {
    const full = Array.from({ length: MAX_TAGS }, (_, i) => `t${i}`);
    expect(mergeTags(full, ['t0', ' t1 '])).toEqual(full);
    expect(() => mergeTags(full, ['one-more'])).toThrow(BadRequestException);
    expect(() => mergeTags(full, ['one-more'])).toThrow(`at most ${MAX_TAGS} tags`);
  });
});
