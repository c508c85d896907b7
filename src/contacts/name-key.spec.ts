import { describe, expect, it } from '@jest/globals';
import { nameKeyOf } from './name-key.js';

describe('nameKeyOf', () => {
  it('ignores case, accents and spaces', () => {
    expect(nameKeyOf('José  María Núñez')).toBe('josemarianunez');
    expect(nameKeyOf('jose maria nunez')).toBe(nameKeyOf('JOSÉMARÍA NUÑEZ'));
  });

  it('tells different names apart and has no key for an empty name', () => {
    expect(nameKeyOf('Ada Lovelace')).not.toBe(nameKeyOf('Ada Lovelac'));
    expect(nameKeyOf('   ')).toBeUndefined();
    expect(nameKeyOf(null)).toBeUndefined();
  });
});
