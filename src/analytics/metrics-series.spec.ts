import { describe, expect, it } from '@jest/globals';
import { parseCalendarDate } from '../common/calendar-dates.js';
import { enumerateBuckets } from './calendar.js';
import { meanSeconds, MetricsSeries } from './metrics-series.js';
import { EMPTY_FIGURES as EMPTY } from '../../test/support/analytics.js';

const day = (text: string) => parseCalendarDate(text) as number;

describe('MetricsSeries', () => {
  it('lists every bucket, empty ones at zero with null averages', () => {
    const series = new MetricsSeries('UTC', enumerateBuckets(day('2025-01-30'), day('2025-02-01'), 'day'));
    expect(series.series()).toEqual([
      { period: '2025-01-30', ...EMPTY },
      { period: '2025-01-31', ...EMPTY },
      { period: '2025-02-01', ...EMPTY },
    ]);
    expect(series.totals()).toEqual(EMPTY);
  });

  it('adds the rows of several pipelines into the bucket of their local start date', () => {
    // $dateTrunc answers the local start of a Paris week as an instant of the previous UTC day.
    const series = new MetricsSeries('Europe/Paris', enumerateBuckets(day('2025-03-24'), day('2025-04-06'), 'week'));
    series.add([
      { _id: new Date('2025-03-23T23:00:00Z'), conversationsCreated: 2 },
      { _id: new Date('2025-03-30T22:00:00Z'), conversationsCreated: 1 },
    ]);
    series.add([{ _id: new Date('2025-03-23T23:00:00Z'), messagesReceived: 5, messagesSent: 4 }]);
    series.add([{ _id: new Date('2025-03-30T22:00:00Z'), flowsExecuted: 3 }]);
    expect(series.series()).toEqual([
      { period: '2025-03-24', ...EMPTY, conversationsCreated: 2, messagesReceived: 5, messagesSent: 4 },
      { period: '2025-03-31', ...EMPTY, conversationsCreated: 1, flowsExecuted: 3 },
    ]);
    expect(series.totals()).toEqual({ ...EMPTY, conversationsCreated: 3, messagesReceived: 5, messagesSent: 4, flowsExecuted: 3 });
  });

  it('averages the totals over every item, not over the bucket means', () => {
    const series = new MetricsSeries('UTC', enumerateBuckets(day('2025-05-01'), day('2025-05-02'), 'day'));
    series.add([
      // Three first responses of 10 s, 20 s and 30 s on the 1st; one of 100 s on the 2nd.
      { _id: new Date('2025-05-01T00:00:00Z'), firstResponses: 3, firstResponseMs: 60_000 },
      { _id: new Date('2025-05-02T00:00:00Z'), firstResponses: 1, firstResponseMs: 100_000 },
      { _id: new Date('2025-05-02T00:00:00Z'), conversationsClosed: 2, resolutions: 2, resolutionMs: 7_201_000 },
    ]);
    const [first, second] = series.series();
    expect(first.avgFirstResponseSeconds).toBe(20);
    expect(first.avgResolutionSeconds).toBeNull();
    expect(second.avgFirstResponseSeconds).toBe(100);
    expect(second.avgResolutionSeconds).toBe(3600.5);
    expect(series.totals().avgFirstResponseSeconds).toBe(40); // 160 s / 4, where the mean of means is 60
    expect(series.totals().avgResolutionSeconds).toBe(3600.5);
    expect(series.totals().conversationsClosed).toBe(2);
  });

  it('refuses a row outside the enumerated buckets rather than dropping it', () => {
    const series = new MetricsSeries('UTC', enumerateBuckets(day('2025-05-01'), day('2025-05-01'), 'day'));
    expect(() => series.add([{ _id: new Date('2025-05-02T00:00:00Z'), messagesSent: 1 }])).toThrow(
      'Aggregation produced a bucket outside the range: 2025-05-02T00:00:00.000Z',
    );
  });
});

describe('meanSeconds', () => {
  it.each([
    [0, 0, null],
    [1_000, 1, 1],
    [1, 3, 0],
    [2, 3, 0.001],
    [10_000, 3, 3.333],
    [20_000, 3, 6.667],
  ])('%d ms over %d items is %p s', (totalMs, count, expected) => {
    expect(meanSeconds(totalMs, count)).toBe(expected);
  });
});
