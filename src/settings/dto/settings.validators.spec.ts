import { describe, expect, it } from '@jest/globals';
import { canonicalLanguage, findOverlap, isIanaTimeZone } from './settings.validators.js';

describe('isIanaTimeZone', () => {
  it.each(['UTC', 'Europe/Paris', 'Asia/Kolkata', 'Asia/Calcutta', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'US/Eastern'])(
    'accepts %s',
    (zone) => expect(isIanaTimeZone(zone)).toBe(true),
  );

  it.each(['', 'utc', 'europe/paris', 'Europe/Atlantis', '+01:00', 'GMT+1', 'Europe/', '/Paris', 'Europe//Paris', 42, null])(
    'refuses %p',
    (zone) => expect(isIanaTimeZone(zone)).toBe(false),
  );
});

describe('canonicalLanguage', () => {
  it.each([
    ['en', 'en'],
    ['EN', 'en'],
    ['pt-br', 'pt-BR'],
    ['zh-Hant-TW', 'zh-Hant-TW'],
    ['sr-latn', 'sr-Latn'],
    ['fil', 'fil'],
  ])('%s is %s', (tag, canonical) => expect(canonicalLanguage(tag)).toBe(canonical));

  it.each(['e', 'english', 'en_US', 'en-', 'en-US-x-private-extra', '12', '', 7])('refuses %p', (tag) =>
    expect(canonicalLanguage(tag)).toBeNull(),
  );
});

describe('findOverlap', () => {
  const window = (day: string, open: string, close: string) => ({ day, open, close });

  it('finds two windows of one day that overlap', () => {
    expect(findOverlap([window('monday', '09:00', '13:00'), window('monday', '12:59', '17:00')])).toEqual([0, 1]);
    expect(findOverlap([window('friday', '08:00', '18:00'), window('monday', '09:00', '10:00'), window('friday', '10:00', '11:00')])).toEqual([0, 2]);
  });

  it('allows touching windows and the same hours on different days', () => {
    expect(findOverlap([window('monday', '09:00', '12:00'), window('monday', '12:00', '17:00')])).toBeNull();
    expect(findOverlap([window('monday', '09:00', '17:00'), window('tuesday', '09:00', '17:00')])).toBeNull();
    expect(findOverlap([])).toBeNull();
  });
});
