import { describe, expect, it } from '@jest/globals';
import { countedSecondsBetween, deadlineAfter } from '../service-levels/counted-time.js';
import { BusinessCalendar, WEEKDAYS, type BusinessHoursRules, type OpeningWindow } from './business-calendar.js';

const HOUR = 3600;
const weekdays = (open: string, close: string): OpeningWindow[] => WEEKDAYS.slice(0, 5).map((day) => ({ day, open, close }));
const everyDay = (open: string, close: string): OpeningWindow[] => WEEKDAYS.map((day) => ({ day, open, close }));
const calendar = (timeZone: string, schedule: OpeningWindow[], holidays: string[] = [], enabled = true) =>
  new BusinessCalendar(timeZone, { enabled, schedule, holidays } satisfies BusinessHoursRules);
const at = (iso: string) => new Date(iso);
const iso = (date: Date | null) => date?.toISOString() ?? null;
// The SLA's counted time over a calendar alone (no sleeps): what business-hours-only targets count.
const openSecondsBetween = (subject: BusinessCalendar, from: Date, to: Date) => countedSecondsBetween(from, to, { calendar: subject, sleeps: [] });
const afterOpenSeconds = (subject: BusinessCalendar, from: Date, seconds: number) => deadlineAfter(from, seconds, { calendar: subject, sleeps: [] });

// Split shifts in Paris, Monday to Friday; Christmas 2026 (a Friday) is a holiday.
const paris = calendar('Europe/Paris', [...weekdays('09:00', '12:00'), ...weekdays('13:00', '17:00')], ['2026-12-25']);
// A night shift: Monday 22:00 to Tuesday 02:00, as one window to 24:00 and one from 00:00.
const night = calendar('UTC', [{ day: 'monday', open: '22:00', close: '24:00' }, { day: 'tuesday', open: '00:00', close: '02:00' }]);
// Every Sunday in the small hours, to cross the DST changes (Europe: 29 March and 25 October 2026, at 01:00 UTC).
const parisSunday = calendar('Europe/Paris', [{ day: 'sunday', open: '01:00', close: '04:00' }]);
const parisGap = calendar('Europe/Paris', [{ day: 'sunday', open: '02:30', close: '05:00' }]);
// America/New_York changes on 8 March (02:00 EST → 03:00 EDT) and 1 November 2026 (02:00 EDT → 01:00 EST).
const newYork = calendar('America/New_York', everyDay('01:00', '04:00'));
const newYorkOffice = calendar('America/New_York', weekdays('09:00', '17:00'));

describe('BusinessCalendar.isOpen and nextChange', () => {
  it.each([
    // [case, calendar, instant, open, next change]
    ['split shift, morning (Mon 10:00 CET)', paris, '2026-01-05T09:00:00Z', true, '2026-01-05T11:00:00.000Z'],
    ['split shift, at the lunch close (12:00 exactly is closed)', paris, '2026-01-05T11:00:00Z', false, '2026-01-05T12:00:00.000Z'],
    ['split shift, lunch', paris, '2026-01-05T11:30:00Z', false, '2026-01-05T12:00:00.000Z'],
    ['split shift, afternoon opens at 13:00 exactly', paris, '2026-01-05T12:00:00Z', true, '2026-01-05T16:00:00.000Z'],
    ['Friday evening: next opening is Monday', paris, '2026-01-09T17:00:00Z', false, '2026-01-12T08:00:00.000Z'],
    ['Saturday', paris, '2026-01-10T10:00:00Z', false, '2026-01-12T08:00:00.000Z'],
    ['holiday (Friday 25 December) closed all day', paris, '2026-12-25T10:00:00Z', false, '2026-12-28T08:00:00.000Z'],
    ['the day before the holiday closes as usual', paris, '2026-12-24T15:00:00Z', true, '2026-12-24T16:00:00.000Z'],
    ['summer time: 09:00 CEST is 07:00 UTC', paris, '2026-06-01T06:59:00Z', false, '2026-06-01T07:00:00.000Z'],
    ['night shift across midnight is one stretch', night, '2026-01-05T23:00:00Z', true, '2026-01-06T02:00:00.000Z'],
    ['night shift, after midnight', night, '2026-01-06T01:00:00Z', true, '2026-01-06T02:00:00.000Z'],
    ['night shift, Monday afternoon', night, '2026-01-05T15:00:00Z', false, '2026-01-05T22:00:00.000Z'],
    // Paris spring forward: 02:00 CET → 03:00 CEST (01:00 UTC). 01:00 CET is 00:00 UTC; 04:00 CEST is 02:00 UTC.
    ['Paris spring forward: opens at 01:00 CET', parisSunday, '2026-03-28T23:30:00Z', false, '2026-03-29T00:00:00.000Z'],
    ['Paris spring forward: closes at 04:00 CEST', parisSunday, '2026-03-29T00:30:00Z', true, '2026-03-29T02:00:00.000Z'],
    ['Paris spring forward: 02:30 is skipped, so it opens at the change', parisGap, '2026-03-29T00:00:00Z', false, '2026-03-29T01:00:00.000Z'],
    // Paris fall back: 03:00 CEST → 02:00 CET (01:00 UTC). 01:00 CEST is 23:00 UTC; 04:00 CET is 03:00 UTC.
    ['Paris fall back: opens at 01:00 CEST', parisSunday, '2026-10-24T22:30:00Z', false, '2026-10-24T23:00:00.000Z'],
    ['Paris fall back: closes at 04:00 CET', parisSunday, '2026-10-25T01:30:00Z', true, '2026-10-25T03:00:00.000Z'],
    ['Paris fall back: 02:30 repeats, it opens at the first', parisGap, '2026-10-24T23:00:00Z', false, '2026-10-25T00:30:00.000Z'],
    // New York spring forward (07:00 UTC): 01:00 EST is 06:00 UTC, 04:00 EDT is 08:00 UTC.
    ['New York spring forward: opens at 01:00 EST', newYork, '2026-03-08T05:00:00Z', false, '2026-03-08T06:00:00.000Z'],
    ['New York spring forward: closes at 04:00 EDT', newYork, '2026-03-08T06:30:00Z', true, '2026-03-08T08:00:00.000Z'],
    // New York fall back (06:00 UTC): 01:00 EDT is 05:00 UTC, 04:00 EST is 09:00 UTC.
    ['New York fall back: opens at the first 01:00 (EDT)', newYork, '2026-11-01T04:30:00Z', false, '2026-11-01T05:00:00.000Z'],
    ['New York fall back: still open in the repeated hour', newYork, '2026-11-01T06:30:00Z', true, '2026-11-01T09:00:00.000Z'],
    ['New York office in winter: 09:00 EST is 14:00 UTC', newYorkOffice, '2026-01-05T13:59:59Z', false, '2026-01-05T14:00:00.000Z'],
    ['New York office in summer: 17:00 EDT is 21:00 UTC', newYorkOffice, '2026-07-06T20:00:00Z', true, '2026-07-06T21:00:00.000Z'],
  ] as const)('%s', (_case, subject, instant, open, next) => {
    expect(subject.isOpen(at(instant))).toBe(open);
    expect(iso(subject.nextChange(at(instant)))).toBe(next);
  });

  it('disabled: always open, never changes', () => {
    const off = calendar('Europe/Paris', weekdays('09:00', '17:00'), [], false);
    expect(off.isOpen(at('2026-01-10T03:00:00Z'))).toBe(true);
    expect(off.nextChange(at('2026-01-10T03:00:00Z'))).toBeNull();
  });

  it('enabled without windows: never open, no change to come', () => {
    const shut = calendar('UTC', []);
    expect(shut.isOpen(at('2026-01-05T10:00:00Z'))).toBe(false);
    expect(shut.nextChange(at('2026-01-05T10:00:00Z'))).toBeNull();
  });

  it('open around the clock: no change to come', () => {
    const always = calendar('Asia/Tokyo', everyDay('00:00', '24:00'));
    expect(always.isOpen(at('2026-01-05T10:00:00Z'))).toBe(true);
    expect(always.nextChange(at('2026-01-05T10:00:00Z'))).toBeNull();
  });
});

describe('open seconds between two instants', () => {
  it.each([
    ['within one window', paris, '2026-01-05T08:00:00Z', '2026-01-05T10:00:00Z', 2 * HOUR],
    ['across the lunch break', paris, '2026-01-05T10:00:00Z', '2026-01-05T13:00:00Z', 2 * HOUR],
    ['Friday 16:00 CET to Monday 10:00 CET, across a weekend', paris, '2026-01-09T15:00:00Z', '2026-01-12T09:00:00Z', 2 * HOUR],
    ['a whole week (5 × 7 h)', paris, '2026-01-05T00:00:00Z', '2026-01-12T00:00:00Z', 35 * HOUR],
    ['a week with a holiday (4 × 7 h)', paris, '2026-12-21T00:00:00Z', '2026-12-28T00:00:00Z', 28 * HOUR],
    ['Paris spring forward: 01:00-04:00 is 2 h', parisSunday, '2026-03-28T12:00:00Z', '2026-03-29T12:00:00Z', 2 * HOUR],
    ['Paris fall back: 01:00-04:00 is 4 h', parisSunday, '2026-10-24T12:00:00Z', '2026-10-25T12:00:00Z', 4 * HOUR],
    ['New York spring forward: 2 h', newYork, '2026-03-08T00:00:00Z', '2026-03-08T12:00:00Z', 2 * HOUR],
    ['New York fall back: 4 h', newYork, '2026-11-01T00:00:00Z', '2026-11-01T12:00:00Z', 4 * HOUR],
    ['night shift, Monday 23:00 to Tuesday 03:00', night, '2026-01-05T23:00:00Z', '2026-01-06T03:00:00Z', 3 * HOUR],
    ['an empty range', paris, '2026-01-05T10:00:00Z', '2026-01-05T10:00:00Z', 0],
    ['a backwards range', paris, '2026-01-05T10:00:00Z', '2026-01-05T09:00:00Z', 0],
  ] as const)('%s', (_case, subject, from, to, seconds) => {
    expect(openSecondsBetween(subject, at(from), at(to))).toBe(seconds);
  });

  it('disabled: every second counts', () => {
    const off = calendar('UTC', [], [], false);
    expect(openSecondsBetween(off, at('2026-01-10T00:00:00Z'), at('2026-01-11T00:00:00Z'))).toBe(24 * HOUR);
  });
});

describe('the instant after so many open seconds', () => {
  it.each([
    ['inside the window', paris, '2026-01-05T08:00:00Z', HOUR, '2026-01-05T09:00:00.000Z'],
    ['exactly to the lunch close', paris, '2026-01-05T10:00:00Z', HOUR, '2026-01-05T11:00:00.000Z'],
    ['over the lunch break', paris, '2026-01-05T10:30:00Z', HOUR, '2026-01-05T12:30:00.000Z'],
    ['from a closed night: counted from the opening', paris, '2026-01-05T22:00:00Z', 10 * 60, '2026-01-06T08:10:00.000Z'],
    ['Friday 16:30 CET + 1 h is Monday 09:30 CET', paris, '2026-01-09T15:30:00Z', HOUR, '2026-01-12T08:30:00.000Z'],
    ['over a holiday and the weekend', paris, '2026-12-24T15:00:00Z', 2 * HOUR, '2026-12-28T09:00:00.000Z'],
    ['Paris spring forward: 3 open hours reach Monday', parisSunday, '2026-03-29T00:00:00Z', 3 * HOUR, '2026-04-05T00:00:00.000Z'],
    ['Paris fall back: 3 open hours end at 03:00 CET', parisSunday, '2026-10-24T23:00:00Z', 3 * HOUR, '2026-10-25T02:00:00.000Z'],
    ['New York spring forward: 2 h end at 04:00 EDT', newYork, '2026-03-08T06:00:00Z', 2 * HOUR, '2026-03-08T08:00:00.000Z'],
    ['New York fall back: 3 h end at 03:00 EST', newYork, '2026-11-01T05:00:00Z', 3 * HOUR, '2026-11-01T08:00:00.000Z'],
    ['zero seconds from a closed time: the opening', paris, '2026-01-10T10:00:00Z', 0, '2026-01-12T08:00:00.000Z'],
  ] as const)('%s', (_case, subject, from, seconds, expected) => {
    expect(iso(afterOpenSeconds(subject, at(from), seconds))).toBe(expected);
  });

  it('is the inverse of the open seconds between', () => {
    const from = at('2026-03-27T10:17:00Z');
    for (const seconds of [1, 59, HOUR, 7 * HOUR + 1, 50 * HOUR]) {
      const due = afterOpenSeconds(paris, from, seconds)!;
      expect(openSecondsBetween(paris, from, due)).toBe(seconds);
    }
  });

  it('disabled: plain seconds; never open: never', () => {
    expect(iso(afterOpenSeconds(calendar('UTC', [], [], false), at('2026-01-10T00:00:00Z'), 90))).toBe('2026-01-10T00:01:30.000Z');
    expect(afterOpenSeconds(calendar('UTC', []), at('2026-01-10T00:00:00Z'), 90)).toBeNull();
  });
});
