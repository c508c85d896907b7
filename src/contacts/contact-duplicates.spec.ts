import { describe, expect, it } from '@jest/globals';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { candidateGroups, conflicting, decodeNameCursor, encodeNameCursor } from './contact-duplicates.js';

describe('duplicate candidates', () => {
  it('counts only a value present on both and different as a conflict', () => {
    expect(conflicting({ email: 'a@x.io' }, { phone: '+1415' })).toBe(false);
    expect(conflicting({ email: 'a@x.io', phone: '+1' }, { email: 'a@x.io', phone: null })).toBe(false);
    expect(conflicting({ email: 'a@x.io' }, { email: 'b@x.io' })).toBe(true);
    expect(conflicting({ phone: '+1' }, { phone: '+2' })).toBe(true);
  });

  it('groups same-named contacts that do not conflict, and leaves out one alone', () => {
    const a = { id: 'a', email: 'a@x.io' };
    const b = { id: 'b', phone: '+1' };
    const c = { id: 'c', email: 'c@x.io' };
    const d = { id: 'd', email: 'd@x.io', phone: '+2' };
    expect(candidateGroups([a, b, c])).toEqual([[a, b]]);
    expect(candidateGroups([a, c, b, d]).map((group) => group.map((contact) => contact.id))).toEqual([['a', 'b']]);
    const nameless: { id: string; email?: string }[] = [{ id: 'e' }, { id: 'f' }];
    expect(candidateGroups(nameless).map((group) => group.length)).toEqual([2]);
  });

  it('round-trips its cursor and refuses a forged one, naming the field', () => {
    expect(decodeNameCursor(encodeNameCursor('josémaría'))).toBe('josémaría');
    let refusal: unknown;
    try {
      decodeNameCursor('!!');
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(RequestValidationException);
    expect((refusal as RequestValidationException).problems).toEqual([expect.objectContaining({ field: 'cursor' })]);
  });
});
