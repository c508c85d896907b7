import { describe, expect, it } from '@jest/globals';
import { BusinessCalendar, WEEKDAYS } from '../business-hours/business-calendar.js';
import type { Interval } from '../business-hours/business-calendar.js';
import { countedSecondsBetween, deadlineAfter, type CountedTime } from './counted-time.js';

const at = (iso: string) => new Date(iso);
const ms = (iso: string) => Date.parse(iso);
const sleep = (from: string, to: string): Interval => [ms(from), ms(to)];
const office = new BusinessCalendar('UTC', { enabled: true, schedule: WEEKDAYS.slice(0, 5).map((day) => ({ day, open: '09:00', close: '17:00' })), holidays: [] });
const everySecond = (...sleeps: Interval[]): CountedTime => ({ calendar: null, sleeps });
const openHours = (...sleeps: Interval[]): CountedTime => ({ calendar: office, sleeps });

describe('counted time: every second or open hours, less sleeps', () => {
  it.each([
    ['every second', everySecond(), '2031-01-06T10:00:00Z', 3600, '2031-01-06T11:00:00.000Z'],
    ['a sleep inside pushes the deadline by its length', everySecond(sleep('2031-01-06T10:10:00Z', '2031-01-06T10:40:00Z')), '2031-01-06T10:00:00Z', 3600, '2031-01-06T11:30:00.000Z'],
    ['a sleep before the start counts for nothing', everySecond(sleep('2031-01-06T08:00:00Z', '2031-01-06T09:00:00Z')), '2031-01-06T10:00:00Z', 3600, '2031-01-06T11:00:00.000Z'],
    ['a sleep across the start counts from the start', everySecond(sleep('2031-01-06T09:30:00Z', '2031-01-06T10:30:00Z')), '2031-01-06T10:00:00Z', 3600, '2031-01-06T11:30:00.000Z'],
    ['two sleeps', everySecond(sleep('2031-01-06T10:10:00Z', '2031-01-06T10:20:00Z'), sleep('2031-01-06T10:30:00Z', '2031-01-06T10:50:00Z')), '2031-01-06T10:00:00Z', 3600, '2031-01-06T11:30:00.000Z'],
    ['open hours: the night does not count', openHours(), '2031-01-06T16:30:00Z', 3600, '2031-01-07T09:30:00.000Z'],
    ['open hours less a sleep over the closing', openHours(sleep('2031-01-06T16:45:00Z', '2031-01-07T09:15:00Z')), '2031-01-06T16:30:00Z', 3600, '2031-01-07T10:00:00.000Z'],
    ['a sleep while closed changes nothing', openHours(sleep('2031-01-06T18:00:00Z', '2031-01-07T08:00:00Z')), '2031-01-06T16:30:00Z', 3600, '2031-01-07T09:30:00.000Z'],
    ['a sleep over several open days', openHours(sleep('2031-01-06T10:00:00Z', '2031-01-08T12:00:00Z')), '2031-01-06T09:00:00Z', 7200, '2031-01-08T13:00:00.000Z'],
  ] as const)('%s', (_case, counted, from, seconds, due) => {
    const deadline = deadlineAfter(at(from), seconds, counted);
    expect(deadline?.toISOString()).toBe(due);
    expect(countedSecondsBetween(at(from), deadline!, counted)).toBe(seconds);
  });

  it('never, when open hours never come or a sleep never ends', () => {
    const shut = new BusinessCalendar('UTC', { enabled: true, schedule: [], holidays: [] });
    expect(deadlineAfter(at('2031-01-06T10:00:00Z'), 60, { calendar: shut, sleeps: [] })).toBeNull();
    expect(deadlineAfter(at('2031-01-06T10:00:00Z'), 60, everySecond([ms('2031-01-06T10:00:00Z'), Number.POSITIVE_INFINITY]))).toBeNull();
  });
});
