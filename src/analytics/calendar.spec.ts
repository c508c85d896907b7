import { describe, expect, it } from '@jest/globals';
import { formatCalendarDate, localDayOf, parseCalendarDate, startOfLocalDay } from '../common/calendar-dates.js';
import { bucketStart, enumerateBuckets, type Granularity } from './calendar.js';

const day = (text: string): number => {
  const parsed = parseCalendarDate(text);
  if (typeof parsed !== 'number') throw new Error(`bad test date ${text}`);
  return parsed;
};
const periods = (first: string, last: string, granularity: Granularity) =>
  enumerateBuckets(day(first), day(last), granularity).map(formatCalendarDate);
const localStart = (date: string, timeZone: string) => startOfLocalDay(day(date), timeZone).toISOString();

describe('parseCalendarDate', () => {
  it.each([
    ['1970-01-01', 0],
    ['1970-01-02', 1],
    ['1969-12-31', -1],
    ['2024-02-29', 19782],
    ['0001-01-01', -719162],
    ['0099-03-01', -683309],
    ['9999-12-31', 2932896],
  ])('reads %s as day %d and writes it back', (text, expected) => {
    expect(parseCalendarDate(text)).toBe(expected);
    expect(formatCalendarDate(expected)).toBe(text);
  });

  it.each(['2025-2-03', '2025-02-3', '25-02-03', '20250203', '2025/02/03', ' 2025-02-03', '2025-02-03 ', '2025-02-03T00:00:00Z', '+02025-02-03', '２０２５-02-03', '', 'today'])(
    'refuses the format of %j',
    (text) => expect(parseCalendarDate(text)).toBe('format'),
  );

  it.each([undefined, null, 20250203, ['2025-02-03'], { $gt: '' }])('refuses the non-string %j', (value) =>
    expect(parseCalendarDate(value)).toBe('format'),
  );

  it.each(['2025-02-29', '2025-02-30', '2024-02-30', '2025-04-31', '2025-13-01', '2025-00-10', '2025-01-00', '2025-01-32', '1900-02-29'])(
    'refuses %s, which the calendar does not have',
    (text) => expect(parseCalendarDate(text)).toBe('calendar'),
  );
});

describe('bucketStart', () => {
  it.each([
    ['2025-03-03', 'week', '2025-03-03'], // a Monday starts its own week
    ['2025-03-09', 'week', '2025-03-03'], // Sunday closes the ISO week
    ['2025-03-10', 'week', '2025-03-10'],
    ['2025-01-01', 'week', '2024-12-30'], // a week across a year end
    ['1970-01-01', 'week', '1969-12-29'],
    ['2025-02-28', 'month', '2025-02-01'],
    ['2024-02-29', 'month', '2024-02-01'],
    ['2025-12-31', 'month', '2025-12-01'],
    ['2025-12-31', 'day', '2025-12-31'],
  ] as const)('%s by %s starts on %s', (date, granularity, expected) => {
    expect(formatCalendarDate(bucketStart(day(date), granularity))).toBe(expected);
  });
});

describe('enumerateBuckets', () => {
  it('lists every day across a month end and a leap day', () => {
    expect(periods('2024-02-27', '2024-03-02', 'day')).toEqual([
      '2024-02-27',
      '2024-02-28',
      '2024-02-29',
      '2024-03-01',
      '2024-03-02',
    ]);
  });

  it('has one bucket for a one-day range', () => {
    expect(periods('2025-05-05', '2025-05-05', 'day')).toEqual(['2025-05-05']);
    expect(periods('2025-05-07', '2025-05-07', 'week')).toEqual(['2025-05-05']);
    expect(periods('2025-05-31', '2025-05-31', 'month')).toEqual(['2025-05-01']);
  });

  it('lists ISO weeks from the Monday on or before the start, across a year end', () => {
    expect(periods('2024-12-25', '2025-01-13', 'week')).toEqual(['2024-12-23', '2024-12-30', '2025-01-06', '2025-01-13']);
    // Sunday to the next Monday spans two weeks.
    expect(periods('2025-03-09', '2025-03-10', 'week')).toEqual(['2025-03-03', '2025-03-10']);
  });

  it('lists months from the first of the start month, across a year end and February', () => {
    expect(periods('2024-11-30', '2025-03-01', 'month')).toEqual(['2024-11-01', '2024-12-01', '2025-01-01', '2025-02-01', '2025-03-01']);
    expect(periods('2025-01-31', '2025-02-01', 'month')).toEqual(['2025-01-01', '2025-02-01']);
  });

  it('gives 366 buckets for the longest allowed range by day, and 53 ISO weeks for 2020', () => {
    expect(enumerateBuckets(day('2024-01-01'), day('2024-12-31'), 'day')).toHaveLength(366);
    expect(periods('2020-01-01', '2020-12-31', 'week')).toHaveLength(53);
    expect(periods('2020-01-01', '2020-12-31', 'week')[52]).toBe('2020-12-28');
  });
});

describe('startOfLocalDay', () => {
  it.each([
    ['2025-03-30', 'UTC', '2025-03-30T00:00:00.000Z'],
    ['2025-03-29', 'Europe/Paris', '2025-03-28T23:00:00.000Z'],
    ['2025-03-30', 'Europe/Paris', '2025-03-29T23:00:00.000Z'], // the 23-hour day: clocks go forward at 02:00
    ['2025-03-31', 'Europe/Paris', '2025-03-30T22:00:00.000Z'],
    ['2025-10-26', 'Europe/Paris', '2025-10-25T22:00:00.000Z'], // the 25-hour day
    ['2025-10-27', 'Europe/Paris', '2025-10-26T23:00:00.000Z'],
    ['2025-11-02', 'America/New_York', '2025-11-02T04:00:00.000Z'],
    ['2025-11-03', 'America/New_York', '2025-11-03T05:00:00.000Z'],
    ['2025-06-01', 'Asia/Kolkata', '2025-05-31T18:30:00.000Z'],
    ['2025-06-01', 'Pacific/Chatham', '2025-05-31T11:15:00.000Z'],
    ['2025-06-01', 'Pacific/Kiritimati', '2025-05-31T10:00:00.000Z'],
    ['2025-06-01', 'Pacific/Pago_Pago', '2025-06-01T11:00:00.000Z'],
  ])('%s in %s begins at %s', (date, timeZone, expected) => {
    expect(localStart(date, timeZone)).toBe(expected);
  });

  it('begins a day whose midnight DST skips at the change (Cairo, 2023-04-28 00:00 → 01:00)', () => {
    expect(localStart('2023-04-28', 'Africa/Cairo')).toBe('2023-04-27T22:00:00.000Z');
    expect(localStart('2023-04-29', 'Africa/Cairo')).toBe('2023-04-28T21:00:00.000Z');
  });

  it('begins a day whose midnight is repeated at the first occurrence (Havana, 2025-11-02 01:00 → 00:00)', () => {
    expect(localStart('2025-11-02', 'America/Havana')).toBe('2025-11-02T04:00:00.000Z');
  });

  it('gives a day the calendar skipped no length (Apia, 2011-12-30)', () => {
    expect(localStart('2011-12-30', 'Pacific/Apia')).toBe('2011-12-30T10:00:00.000Z');
    expect(localStart('2011-12-31', 'Pacific/Apia')).toBe('2011-12-30T10:00:00.000Z');
    expect(localStart('2011-12-29', 'Pacific/Apia')).toBe('2011-12-29T10:00:00.000Z');
  });

  it('is the inverse of localDayOf at every local midnight of a year with DST', () => {
    for (const timeZone of ['Europe/Paris', 'America/New_York', 'Australia/Sydney', 'Africa/Cairo', 'America/Havana']) {
      for (let date = day('2025-01-01'); date <= day('2025-12-31'); date += 1) {
        const start = startOfLocalDay(date, timeZone);
        expect(localDayOf(start, timeZone)).toBe(date);
        expect(localDayOf(new Date(start.getTime() - 1), timeZone)).toBe(date - 1);
      }
    }
  });
});

describe('localDayOf', () => {
  it.each([
    ['2025-03-09T23:30:00.000Z', 'UTC', '2025-03-09'],
    ['2025-03-09T23:30:00.000Z', 'Europe/Paris', '2025-03-10'],
    ['2025-03-10T03:59:59.999Z', 'America/New_York', '2025-03-09'],
    ['2025-03-10T04:00:00.000Z', 'America/New_York', '2025-03-10'],
    ['1969-12-31T23:59:59.999Z', 'UTC', '1969-12-31'],
  ])('%s in %s is %s', (instant, timeZone, expected) => {
    expect(formatCalendarDate(localDayOf(new Date(instant), timeZone))).toBe(expected);
  });
});
