import { describe, expect, it } from '@jest/globals';
import { BoundedMap } from './bounded-map.js';

describe('BoundedMap', () => {
  it('forgets the entry set longest ago when a new key would pass the bound, and never for a known key', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2);
    map.set('a', 10);
    expect([...map]).toEqual([['a', 10], ['b', 2]]);
    map.set('c', 3);
    expect([...map]).toEqual([['b', 2], ['c', 3]]);
    map.delete('b');
    map.set('b', 4);
    map.set('d', 5);
    expect([...map]).toEqual([['b', 4], ['d', 5]]);
  });
});
