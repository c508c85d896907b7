/**
 * Arithmetic over Decimal128 and Long in aggregation, from the MongoDB manual's examples: the `artwork` collection of
 * the $bucket page (prices in Decimal128), the mixed array of the $sortArray page, and the operators' own rules (the
 * widest operand type wins; numbers of every type compare by value).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Decimal128, Long } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

const D = (s: string) => Decimal128.fromString(s);
const dec = (v: unknown) => {
  expect(v).toBeInstanceOf(Decimal128);
  return (v as Decimal128).toString();
};

describe('embedded engine: Decimal128 and Long arithmetic', () => {
  const fx = engineFixture('decimals');
  const artwork = () => fx.db.collection<Loose>('artwork');

  beforeAll(async () => {
    await artwork().insertMany([
      { _id: 1, title: 'The Pillars of Society', artist: 'Grosz', year: 1926, price: D('199.99') },
      { _id: 2, title: 'Melancholy III', artist: 'Munch', year: 1902, price: D('280.00') },
      { _id: 3, title: 'Dancer', artist: 'Miro', year: 1925, price: D('76.04') },
      { _id: 4, title: 'The Great Wave off Kanagawa', artist: 'Hokusai', price: D('167.30') },
      { _id: 5, title: 'The Persistence of Memory', artist: 'Dali', year: 1931, price: D('483.00') },
      { _id: 6, title: 'Composition VII', artist: 'Kandinsky', year: 1913, price: D('385.00') },
      { _id: 7, title: 'The Scream', artist: 'Munch', year: 1893 },
      { _id: 8, title: 'Blue Flower', artist: "O'Keefe", year: 1918, price: D('118.42') },
    ]);
  });

  it('$bucket by a Decimal128 price (the manual $bucket and $facet example): buckets, _id first, averages in Decimal128', async () => {
    const [{ price }] = await artwork()
      .aggregate([
        {
          $facet: {
            price: [
              {
                $bucket: {
                  groupBy: '$price',
                  boundaries: [0, 200, 400],
                  default: 'Other',
                  output: { count: { $sum: 1 }, artwork: { $push: { title: '$title', price: '$price' } }, averagePrice: { $avg: '$price' } },
                },
              },
            ],
          },
        },
      ])
      .toArray();
    expect(price.map((b: Loose) => [Object.keys(b)[0], b._id, b.count, b.artwork.map((a: Loose) => a.title), dec(b.averagePrice)])).toEqual([
      ['_id', 0, 4, ['The Pillars of Society', 'Dancer', 'The Great Wave off Kanagawa', 'Blue Flower'], '140.4375'],
      ['_id', 200, 2, ['Melancholy III', 'Composition VII'], '332.50'],
      ['_id', 'Other', 2, ['The Persistence of Memory', 'The Scream'], '483.00'],
    ]);
  });

  it('$bucket leaves out empty buckets and refuses a value outside the boundaries without a default (40066)', async () => {
    const buckets = await artwork()
      .aggregate([{ $match: { price: { $exists: true } } }, { $bucket: { groupBy: '$price', boundaries: [0, 50, 100, 1000] } }])
      .toArray();
    expect(buckets).toEqual([
      { _id: 50, count: 1 },
      { _id: 100, count: 6 },
    ]);
    await expect(
      artwork()
        .aggregate([{ $bucket: { groupBy: '$price', boundaries: [0, 1000] } }])
        .toArray(),
    ).rejects.toMatchObject({ code: 40066 });
  });

  it('$sum and $avg over Decimal128 compute in Decimal128; over Longs in Long', async () => {
    const [row] = await artwork()
      .aggregate([
        { $group: { _id: null, total: { $sum: '$price' }, average: { $avg: '$price' }, min: { $min: '$price' }, max: { $max: '$price' } } },
      ])
      .toArray();
    expect([dec(row.total), dec(row.average), dec(row.min), dec(row.max)]).toEqual(['1709.75', '244.25', '76.04', '483.00']);
    const counters = fx.db.collection<Loose>('counters');
    await counters.insertMany([{ n: Long.fromString('9007199254740993') }, { n: Long.fromString('9007199254740993') }, { n: 'not a number' }]);
    const [longs] = await counters
      .aggregate([{ $group: { _id: null, total: { $sum: '$n' }, average: { $avg: '$n' } } }], { promoteLongs: false })
      .toArray();
    expect(longs.total).toEqual(Long.fromString('18014398509481986'));
    expect(longs.average).toBe(9007199254740992); // the double nearest the mean, as MongoDB answers
  });

  it('$add, $subtract, $multiply and $divide with a Decimal128 operand answer an exact Decimal128', async () => {
    const [row] = await artwork()
      .aggregate([
        { $match: { _id: 1 } },
        {
          $project: {
            _id: 0,
            add: { $add: [D('0.1'), D('0.2')] },
            withTax: { $multiply: ['$price', D('1.10')] },
            twice: { $multiply: ['$price', 2] },
            less: { $subtract: ['$price', 100] },
            third: { $divide: [D('1'), 3] },
            half: { $divide: ['$price', 2] },
            missing: { $add: ['$price', '$nothing'] },
            later: { $add: [new Date('2024-01-01T00:00:00Z'), D('1000')] },
          },
        },
      ])
      .toArray();
    expect([row.add, row.withTax, row.twice, row.less, row.third, row.half].map(dec)).toEqual([
      '0.3',
      '219.9890',
      '399.98',
      '99.99',
      '0.3333333333333333333333333333333333',
      '99.995',
    ]);
    expect(row.missing).toBeNull();
    expect(row.later).toEqual(new Date('2024-01-01T00:00:01Z'));
    await expect(
      artwork()
        .aggregate([{ $project: { x: { $divide: ['$price', D('0')] } } }])
        .toArray(),
    ).rejects.toMatchObject({ code: 16608 });
    await expect(
      artwork()
        .aggregate([{ $project: { x: { $multiply: ['$price', 'two'] } } }])
        .toArray(),
    ).rejects.toMatchObject({ code: 16555 });
  });

  it('$sortArray puts a Decimal128 among the numbers (the manual example)', async () => {
    const input = [20, 4, { a: 'Free' }, 6, 21, 5, 'Gratis', { a: null }, { a: { sale: true, price: 19 } }, D('10.23'), { a: 'On sale' }];
    const [row] = await artwork()
      .aggregate([{ $limit: 1 }, { $project: { _id: 0, result: { $sortArray: { input, sortBy: 1 } } } }])
      .toArray();
    expect(row.result).toEqual([
      4,
      5,
      6,
      D('10.23'),
      20,
      21,
      'Gratis',
      { a: null },
      { a: 'Free' },
      { a: 'On sale' },
      { a: { sale: true, price: 19 } },
    ]);
    const [byField] = await artwork()
      .aggregate([
        { $limit: 1 },
        { $project: { _id: 0, result: { $sortArray: { input: [{ p: D('2.5') }, { p: 3 }, { p: 1 }], sortBy: { p: -1 } } } } },
      ])
      .toArray();
    expect(byField.result).toEqual([{ p: 3 }, { p: D('2.5') }, { p: 1 }]);
  });

  it('$toDecimal answers a Decimal128 (the manual orders example, with $multiply)', async () => {
    const orders = fx.db.collection<Loose>('orders');
    await orders.insertMany([
      { _id: 1, item: 'apple', qty: 5, price: 10 },
      { _id: 2, item: 'pie', qty: 10, price: D('20.0') },
      { _id: 3, item: 'ice cream', qty: 2, price: '4.99' },
      { _id: 4, item: 'almonds', qty: 5, price: 5 },
    ]);
    const rows = await orders
      .aggregate([
        { $addFields: { convertedPrice: { $toDecimal: '$price' }, convertedQty: { $toInt: '$qty' } } },
        { $project: { item: 1, totalPrice: { $multiply: ['$convertedPrice', '$convertedQty'] } } },
      ])
      .toArray();
    expect(rows.map((r) => [r.item, dec(r.totalPrice)])).toEqual([
      ['apple', '50'],
      ['pie', '200.0'],
      ['ice cream', '9.98'],
      ['almonds', '25'],
    ]);
    const [row] = await orders.aggregate([{ $match: { _id: 1 } }, { $project: { _id: 0, d: { $toDecimal: 5.5 } } }]).toArray();
    expect(dec(row.d)).toBe('5.50000000000000');
  });

  it('$percentile and $median answer what MongoDB does (the manual testScores example)', async () => {
    const scores = fx.db.collection<Loose>('testScores');
    await scores.insertMany([
      { studentId: '2345', test01: 62, test02: 81, test03: 80 },
      { studentId: '2356', test01: 60, test02: 83, test03: 79 },
      { studentId: '2358', test01: 67, test02: 82, test03: 78 },
      { studentId: '2367', test01: 64, test02: 72, test03: 77 },
      { studentId: '2369', test01: 60, test02: 53, test03: 72 },
    ]);
    const [row] = await scores
      .aggregate([
        {
          $group: {
            _id: null,
            test01_percentiles: { $percentile: { input: '$test01', p: [0.5, 0.75, 0.9, 0.95], method: 'approximate' } },
            test02_median: { $median: { input: '$test02', method: 'approximate' } },
            test03_percentiles: { $percentile: { input: '$test03', p: [0.5, 0.75, 0.9, 0.95], method: 'approximate' } },
          },
        },
      ])
      .toArray();
    expect(row).toEqual({ _id: null, test01_percentiles: [62, 64, 67, 67], test02_median: 81, test03_percentiles: [78, 79, 80, 80] });
    const [decimals] = await artwork()
      .aggregate([{ $group: { _id: null, m: { $median: { input: '$price', method: 'approximate' } }, sd: { $stdDevPop: '$price' } } }])
      .toArray();
    expect(decimals.m).toBe(199.99);
    expect(decimals.sd).toBeGreaterThan(100);
  });

  it('$isNumber and the $in expression take every number type', async () => {
    const [row] = await artwork()
      .aggregate([
        { $match: { _id: 2 } },
        { $project: { _id: 0, isNumber: { $isNumber: '$price' }, inList: { $in: ['$price', [280, 'x']] }, notIn: { $in: ['$price', [28]] } } },
      ])
      .toArray();
    expect(row).toEqual({ isNumber: true, inList: true, notIn: false });
  });

  it('$toString and $convert of Decimal128 answer its digits or a Decimal128; what the engine cannot compute is refused (115)', async () => {
    const [row] = await artwork()
      .aggregate([
        { $match: { _id: 2 } },
        {
          $project: {
            _id: 0,
            s: { $toString: '$price' },
            c: { $convert: { input: '$price', to: 'string' } },
            d: { $convert: { input: '$year', to: 'decimal' } },
            bad: { $convert: { input: 'x', to: 'decimal', onError: 'none' } },
          },
        },
      ])
      .toArray();
    expect([row.s, row.c, dec(row.d), row.bad]).toEqual(['280.00', '280.00', '1902', 'none']);
    await expect(
      artwork()
        .aggregate([{ $bucketAuto: { groupBy: '$price', buckets: 2 } }])
        .toArray(),
    ).rejects.toMatchObject({ code: 115 });
    await expect(
      artwork()
        .aggregate([
          { $match: { price: { $exists: true } } },
          { $setWindowFields: { sortBy: { _id: 1 }, output: { e: { $expMovingAvg: { input: '$price', N: 2 } } } } },
        ])
        .toArray(),
    ).rejects.toMatchObject({ code: 115 });
    await expect(
      artwork()
        .aggregate([{ $group: { _id: null, c: { $covariancePop: ['$price', '$year'] } } }])
        .toArray(),
    ).rejects.toMatchObject({ code: 115 });
  });
});
