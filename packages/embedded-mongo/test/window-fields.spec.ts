/**
 * `$setWindowFields` and its window operators, from the MongoDB manual's own examples (the `cakeSales` collection of
 * the $setWindowFields, $rank, $shift and $documentNumber pages, the fleet of $derivative and $integral, the stock
 * prices of $expMovingAvg, the price gaps of $linearFill and $locf): their input, their command, their printed output.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { engineFixture, type Loose } from './fixture.js';

const cakeSales = [
  { _id: 0, type: 'chocolate', orderDate: new Date('2020-05-18T14:10:30Z'), state: 'CA', price: 13, quantity: 120 },
  { _id: 1, type: 'chocolate', orderDate: new Date('2021-03-20T11:30:05Z'), state: 'WA', price: 14, quantity: 140 },
  { _id: 2, type: 'vanilla', orderDate: new Date('2021-01-11T06:31:15Z'), state: 'CA', price: 12, quantity: 145 },
  { _id: 3, type: 'vanilla', orderDate: new Date('2020-02-08T13:13:23Z'), state: 'WA', price: 13, quantity: 104 },
  { _id: 4, type: 'strawberry', orderDate: new Date('2019-05-18T16:09:01Z'), state: 'CA', price: 41, quantity: 162 },
  { _id: 5, type: 'strawberry', orderDate: new Date('2019-01-08T06:12:03Z'), state: 'WA', price: 43, quantity: 134 },
];

describe('embedded engine: $setWindowFields (the manual examples)', () => {
  const fx = engineFixture('window');
  const sales = () => fx.db.collection<Loose>('cakeSales');
  const run = (output: Loose, partitionBy: Loose = '$state', sortBy: Loose = { orderDate: 1 }) =>
    sales()
      .aggregate([{ $setWindowFields: { partitionBy, sortBy, output } }])
      .toArray();
  const column = (rows: Loose[], field: string) => rows.map((r) => [r._id, r[field]]);

  beforeAll(async () => {
    await sales().insertMany(cakeSales);
  });

  it('documents window: cumulative quantity for each state, partitions in order, documents kept whole', async () => {
    const rows = await run({ cumulativeQuantityForState: { $sum: '$quantity', window: { documents: ['unbounded', 'current'] } } });
    expect(rows[0]).toEqual({ ...cakeSales[4], cumulativeQuantityForState: 162 });
    expect(column(rows, 'cumulativeQuantityForState')).toEqual([
      [4, 162],
      [0, 282],
      [2, 427],
      [5, 134],
      [3, 238],
      [1, 378],
    ]);
  });

  it('partitionBy an expression: cumulative and moving average quantity for each year', async () => {
    const rows = await run(
      {
        cumulativeQuantityForYear: { $sum: '$quantity', window: { documents: ['unbounded', 'current'] } },
        averageQuantity: { $avg: '$quantity', window: { documents: [-1, 0] } },
        maximumQuantityForYear: { $max: '$quantity', window: { documents: ['unbounded', 'unbounded'] } },
      },
      { $year: '$orderDate' },
    );
    expect(column(rows, 'cumulativeQuantityForYear')).toEqual([
      [5, 134],
      [4, 296],
      [3, 104],
      [0, 224],
      [2, 145],
      [1, 285],
    ]);
    expect(column(rows, 'averageQuantity')).toEqual([
      [5, 134],
      [4, 148],
      [3, 104],
      [0, 112],
      [2, 145],
      [1, 142.5],
    ]);
    expect(column(rows, 'maximumQuantityForYear')).toEqual([
      [5, 162],
      [4, 162],
      [3, 120],
      [0, 120],
      [2, 145],
      [1, 145],
    ]);
  });

  it('range window: quantity from orders within 10 of the price', async () => {
    const rows = await run({ quantityFromSimilarOrders: { $sum: '$quantity', window: { range: [-10, 10] } } }, '$state', { price: 1 });
    expect(column(rows, 'quantityFromSimilarOrders')).toEqual([
      [2, 265],
      [0, 265],
      [4, 162],
      [3, 244],
      [1, 244],
      [5, 134],
    ]);
  });

  it('time range windows with a unit, positive and negative upper bounds', async () => {
    const d = (s: string) => new Date(s);
    const [ca4, ca0, ca2] = [d('2019-05-18T16:09:01Z'), d('2020-05-18T14:10:30Z'), d('2021-01-11T06:31:15Z')];
    const [wa5, wa3, wa1] = [d('2019-01-08T06:12:03Z'), d('2020-02-08T13:13:23Z'), d('2021-03-20T11:30:05Z')];
    const positive = await run({ recentOrders: { $push: '$orderDate', window: { range: ['unbounded', 10], unit: 'month' } } });
    expect(column(positive, 'recentOrders')).toEqual([
      [4, [ca4]],
      [0, [ca4, ca0, ca2]],
      [2, [ca4, ca0, ca2]],
      [5, [wa5]],
      [3, [wa5, wa3]],
      [1, [wa5, wa3, wa1]],
    ]);
    const negative = await run({ recentOrders: { $push: '$orderDate', window: { range: ['unbounded', -10], unit: 'month' } } });
    expect(column(negative, 'recentOrders')).toEqual([
      [4, []],
      [0, [ca4]],
      [2, [ca4]],
      [5, []],
      [3, [wa5]],
      [1, [wa5, wa3]],
    ]);
  });

  it('range bounds "current" take in every tie of the current value', async () => {
    const ties = fx.db.collection<Loose>('ties');
    await ties.insertMany([
      { _id: 1, v: 1 },
      { _id: 2, v: 2 },
      { _id: 3, v: 2 },
      { _id: 4, v: 3 },
    ]);
    const output = { n: { $count: {}, window: { range: ['unbounded', 'current'] } }, r: { $rank: {} }, dr: { $denseRank: {} } };
    const rows = await ties.aggregate([{ $setWindowFields: { sortBy: { v: 1 }, output } }]).toArray();
    expect(rows.map((r) => [r._id, r.n, r.r, r.dr])).toEqual([
      [1, 1, 1, 1],
      [2, 3, 2, 2],
      [3, 3, 2, 2],
      [4, 4, 4, 3],
    ]);
  });

  it('$rank, $documentNumber and $shift (their reference pages)', async () => {
    const rows = await run(
      {
        rankQuantityForState: { $rank: {} },
        documentNumberForState: { $documentNumber: {} },
        shiftQuantityForState: { $shift: { output: '$quantity', by: 1, default: 'Not available' } },
      },
      '$state',
      { quantity: -1 },
    );
    expect(rows.map((r) => [r._id, r.rankQuantityForState, r.documentNumberForState, r.shiftQuantityForState])).toEqual([
      [4, 1, 1, 145],
      [2, 2, 2, 120],
      [0, 3, 3, 'Not available'],
      [1, 1, 1, 134],
      [5, 2, 2, 104],
      [3, 3, 3, 'Not available'],
    ]);
  });

  it('$derivative and $integral over a time range (the delivery fleet)', async () => {
    const fleet = fx.db.collection<Loose>('deliveryFleet');
    await fleet.insertMany([
      { truckID: '1', timeStamp: new Date('2020-05-18T14:10:30Z'), miles: 1295.1 },
      { truckID: '1', timeStamp: new Date('2020-05-18T14:11:00Z'), miles: 1295.63 },
      { truckID: '1', timeStamp: new Date('2020-05-18T14:11:30Z'), miles: 1296.25 },
      { truckID: '1', timeStamp: new Date('2020-05-18T14:12:00Z'), miles: 1296.76 },
    ]);
    const rows = await fleet
      .aggregate([
        {
          $setWindowFields: {
            partitionBy: '$truckID',
            sortBy: { timeStamp: 1 },
            output: {
              truckAverageSpeed: { $derivative: { input: '$miles', unit: 'hour' }, window: { range: [-30, 0], unit: 'second' } },
              distance: { $integral: { input: '$miles', unit: 'hour' }, window: { range: [-30, 0], unit: 'second' } },
            },
          },
        },
      ])
      .toArray();
    expect(rows[0].truckAverageSpeed).toBeNull();
    expect(rows.slice(1).map((r) => r.truckAverageSpeed)).toEqual([expect.closeTo(63.6, 6), expect.closeTo(74.4, 6), expect.closeTo(61.2, 6)]);
    expect(rows[0].distance).toBe(0);
    expect(rows[1].distance).toBeCloseTo((1295.1 + 1295.63) / 2 / 120, 6);
  });

  it('$expMovingAvg with N and with alpha', async () => {
    const prices = fx.db.collection<Loose>('stockPrices');
    await prices.insertMany([
      { stock: 'ABC', date: new Date('2020-05-18T20:00:00Z'), price: 13 },
      { stock: 'ABC', date: new Date('2020-05-19T20:00:00Z'), price: 15.4 },
      { stock: 'ABC', date: new Date('2020-05-20T20:00:00Z'), price: 12 },
      { stock: 'ABC', date: new Date('2020-05-21T20:00:00Z'), price: 11.7 },
    ]);
    const rows = await prices
      .aggregate([
        {
          $setWindowFields: {
            partitionBy: '$stock',
            sortBy: { date: 1 },
            output: { n: { $expMovingAvg: { input: '$price', N: 2 } }, a: { $expMovingAvg: { input: '$price', alpha: 0.75 } } },
          },
        },
      ])
      .toArray();
    expect(rows.map((r) => r.n)).toEqual([13, expect.closeTo(14.6, 9), expect.closeTo(12.866666666666667, 9), expect.closeTo(12.088888888888889, 9)]);
    expect(rows.map((r) => r.a)).toEqual([13, expect.closeTo(14.8, 9), expect.closeTo(12.7, 9), expect.closeTo(11.95, 9)]);
  });

  it('$linearFill and $locf fill the gaps', async () => {
    const stock = fx.db.collection<Loose>('stock');
    await stock.insertMany([
      { time: new Date('2021-03-08T09:00:00.000Z'), price: 500 },
      { time: new Date('2021-03-08T10:00:00.000Z') },
      { time: new Date('2021-03-08T11:00:00.000Z'), price: 515 },
      { time: new Date('2021-03-08T12:00:00.000Z') },
      { time: new Date('2021-03-08T13:00:00.000Z') },
      { time: new Date('2021-03-08T14:00:00.000Z'), price: 485 },
    ]);
    const rows = await stock
      .aggregate([{ $setWindowFields: { sortBy: { time: 1 }, output: { linear: { $linearFill: '$price' }, locf: { $locf: '$price' } } } }])
      .toArray();
    expect(rows.map((r) => r.linear)).toEqual([500, 507.5, 515, 505, 495, 485]);
    expect(rows.map((r) => r.locf)).toEqual([500, 500, 515, 515, 515, 485]);
  });

  it('$minMaxScaler scales over the window, and $topN, $median and $covariancePop run over windows too', async () => {
    const rows = await run(
      {
        scaled: { $minMaxScaler: { input: '$quantity' } },
        top2: { $topN: { n: 2, sortBy: { quantity: -1 }, output: '$quantity' }, window: { documents: ['unbounded', 'current'] } },
        median: { $median: { input: '$price', method: 'approximate' }, window: { documents: [-1, 1] } },
      },
      '$state',
      { orderDate: 1 },
    );
    expect(rows.map((r) => [r._id, r.scaled, r.top2, r.median])).toEqual([
      [4, 1, [162], 13],
      [0, 0, [162, 120], 13],
      [2, 25 / 42, [162, 145], 12],
      [5, 30 / 36, [134], 13],
      [3, 0, [134, 104], 14],
      [1, 1, [140, 134], 13],
    ]);
  });

  it('MongoDB errors: a bounded window without sortBy, a range over a non-number, an unknown window function', async () => {
    await expect(
      sales()
        .aggregate([{ $setWindowFields: { output: { s: { $sum: '$quantity', window: { documents: [-1, 0] } } } } }])
        .toArray(),
    ).rejects.toMatchObject({ code: 9 });
    await expect(run({ s: { $sum: '$quantity', window: { range: [-1, 0] } } }, '$state', { type: 1 })).rejects.toMatchObject({ code: 5429414 });
    await expect(run({ s: { $nope: '$quantity' } })).rejects.toMatchObject({ code: expect.any(Number) });
    await expect(run({ s: { $mergeObjects: '$$ROOT' } })).rejects.toMatchObject({ code: 9 });
  });
});
