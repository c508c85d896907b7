import { describe, expect, it } from '@jest/globals';
import { escapeRegExp } from '../common/escape-regexp.js';
import { contactListFilter } from './contact-search.js';

type Clause = Record<string, RegExp>;

function clauses(search: string): Clause[] {
  return (contactListFilter({ search }) as { $or: Clause[] }).$or;
}

function matches(search: string, contact: { name?: string; email?: string; phone?: string }): boolean {
  return clauses(search).some((clause) => {
    const [field, pattern] = Object.entries(clause)[0];
    const value = contact[field as keyof typeof contact];
    return value !== undefined && pattern.test(value);
  });
}

describe('contactListFilter', () => {
  const grace = { name: 'Grace Hopper', email: 'grace.hopper@navy.example', phone: '+14155552671' };

  it('is empty without search or tags', () => {
    expect(contactListFilter({})).toEqual({});
    expect(contactListFilter({ tags: [] })).toEqual({});
  });

  it('keeps contacts having every listed tag', () => {
    expect(contactListFilter({ tags: ['vip', 'beta'] })).toEqual({ tags: { $all: ['vip', 'beta'] } });
  });

  it.each([
    ['hopp', true],
    ['GRACE h', true],
    ['Grace.Hopper@NAVY', true],
    ['415 555', true],
    ['(415) 555-26', true],
    ['+1415.555', true],
    ['4155552671', true],
    ['41555526710', false],
    ['ada', false],
    ['grace hopper!', false],
  ])('search %j matches Grace: %s', (search, expected) => {
    expect(matches(search, grace)).toBe(expected);
  });

  it('takes regular-expression characters literally', () => {
    expect(matches('.*', grace)).toBe(false);
    expect(matches('a+b', { email: 'a+b@example.com' })).toBe(true);
    expect(matches('a+b', { email: 'aab@example.com' })).toBe(false);
    expect(matches('(x', { name: 'Mr (x) Smith' })).toBe(true);
    expect(matches('[', { name: 'bracket [ name' })).toBe(true);
  });

  it('leaves the phone out when the text cannot be a piece of a phone number', () => {
    expect(clauses('grace').map((clause) => Object.keys(clause)[0])).toEqual(['name', 'email']);
    expect(clauses('+ -').map((clause) => Object.keys(clause)[0])).toEqual(['name', 'email']);
    expect(clauses('12a').map((clause) => Object.keys(clause)[0])).toEqual(['name', 'email']);
    expect(clauses('+1 (415)').map((clause) => Object.keys(clause)[0])).toEqual(['name', 'email', 'phone']);
  });

  it('escapes every metacharacter', () => {
    const special = '.*+?^${}()|[]\\';
    expect(new RegExp(`^${escapeRegExp(special)}$`).test(special)).toBe(true);
  });
});
