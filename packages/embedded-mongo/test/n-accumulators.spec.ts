/**
 * `$top`, `$bottom`, `$topN`, `$bottomN`, `$firstN`, `$lastN`, `$maxN`, `$minN`: the MongoDB manual's `gamescores`
 * examples (array `output` and `input`, one group and several), the array-expression form of `$maxN`/`$minN`, and
 * Decimal128 sort keys in BSON order.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Decimal128 } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

describe('embedded engine: $top, $bottom and the N accumulators', () => {
  const fx = engineFixture('topn');
  const scores = () => fx.db.collection<Loose>('gamescores');
  const groups = async (accumulator: Loose) =>
    Object.fromEntries(
      (
        await scores()
          .aggregate([{ $group: { _id: '$gameId', out: accumulator } }])
          .toArray()
      ).map((g) => [g._id, g.out]),
    );

  beforeAll(async () => {
    await scores().insertMany([
      { playerId: 'PlayerA', gameId: 'G1', score: 31 },
      { playerId: 'PlayerB', gameId: 'G1', score: 33 },
      { playerId: 'PlayerC', gameId: 'G1', score: 99 },
      { playerId: 'PlayerD', gameId: 'G1', score: 1 },
      { playerId: 'PlayerA', gameId: 'G2', score: 10 },
      { playerId: 'PlayerB', gameId: 'G2', score: 14 },
      { playerId: 'PlayerC', gameId: 'G2', score: 66 },
      { playerId: 'PlayerD', gameId: 'G2', score: 80 },
    ]);
  });

  it('$top and $bottom answer the one output, an array output not wrapped again', async () => {
    expect(await groups({ $top: { output: ['$playerId', '$score'], sortBy: { score: -1 } } })).toEqual({ G1: ['PlayerC', 99], G2: ['PlayerD', 80] });
    expect(await groups({ $bottom: { output: ['$playerId', '$score'], sortBy: { score: -1 } } })).toEqual({
      G1: ['PlayerD', 1],
      G2: ['PlayerA', 10],
    });
    expect(await groups({ $top: { output: '$playerId', sortBy: { score: 1 } } })).toEqual({ G1: 'PlayerD', G2: 'PlayerA' });
  });

  it('$topN and $bottomN answer n outputs in sort order', async () => {
    expect((await groups({ $topN: { output: ['$playerId', '$score'], sortBy: { score: -1 }, n: 3 } })).G1).toEqual([
      ['PlayerC', 99],
      ['PlayerB', 33],
      ['PlayerA', 31],
    ]);
    expect((await groups({ $bottomN: { output: ['$playerId', '$score'], sortBy: { score: -1 }, n: 3 } })).G1).toEqual([
      ['PlayerB', 33],
      ['PlayerA', 31],
      ['PlayerD', 1],
    ]);
    const byKey = await scores()
      .aggregate([
        {
          $group: {
            _id: { gameId: '$gameId' },
            gamescores: { $topN: { output: '$score', n: { $cond: { if: { $eq: ['$gameId', 'G2'] }, then: 1, else: 3 } }, sortBy: { score: -1 } } },
          },
        },
        { $sort: { '_id.gameId': 1 } },
      ])
      .toArray();
    expect(byKey).toEqual([
      { _id: { gameId: 'G1' }, gamescores: [99, 33, 31] },
      { _id: { gameId: 'G2' }, gamescores: [80] },
    ]);
  });

  it('$firstN, $lastN, $maxN and $minN over a group', async () => {
    expect((await groups({ $firstN: { input: ['$playerId', '$score'], n: 3 } })).G1).toEqual([
      ['PlayerA', 31],
      ['PlayerB', 33],
      ['PlayerC', 99],
    ]);
    expect((await groups({ $lastN: { input: ['$playerId', '$score'], n: 3 } })).G1).toEqual([
      ['PlayerB', 33],
      ['PlayerC', 99],
      ['PlayerD', 1],
    ]);
    expect((await groups({ $maxN: { input: ['$score', '$playerId'], n: 3 } })).G1).toEqual([
      [99, 'PlayerC'],
      [33, 'PlayerB'],
      [31, 'PlayerA'],
    ]);
    expect((await groups({ $minN: { input: ['$score', '$playerId'], n: 3 } })).G1).toEqual([
      [1, 'PlayerD'],
      [31, 'PlayerA'],
      [33, 'PlayerB'],
    ]);
    await expect(groups({ $maxN: { input: '$score', n: 0 } })).rejects.toMatchObject({ code: 5787908 });
  });

  it('$maxN and $minN as array expressions (the manual example)', async () => {
    const arrays = fx.db.collection<Loose>('scoreArrays');
    await arrays.insertMany([
      { playerId: 1, score: [1, 2, 3] },
      { playerId: 2, score: [12, 90, 7, 89, 8] },
      { playerId: 3, score: [null] },
      { playerId: 4, score: [] },
      { playerId: 5, score: [1293, '2', 3489, 9] },
    ]);
    const rows = await arrays
      .aggregate([
        { $project: { _id: 0, playerId: 1, maxScores: { $maxN: { n: 2, input: '$score' } }, minScores: { $minN: { n: 2, input: '$score' } } } },
      ])
      .toArray();
    expect(rows).toEqual([
      { playerId: 1, maxScores: [3, 2], minScores: [1, 2] },
      { playerId: 2, maxScores: [90, 89], minScores: [7, 8] },
      { playerId: 3, maxScores: [], minScores: [] },
      { playerId: 4, maxScores: [], minScores: [] },
      { playerId: 5, maxScores: ['2', 3489], minScores: [9, 1293] },
    ]);
  });

  it('sorts Decimal128 keys among the numbers', async () => {
    const prices = fx.db.collection<Loose>('prices');
    await prices.insertMany([{ p: 5 }, { p: Decimal128.fromString('10.5') }, { p: 7.25 }, { p: Decimal128.fromString('0.5') }]);
    const [row] = await prices
      .aggregate([
        {
          $group: {
            _id: null,
            top: { $top: { output: '$p', sortBy: { p: -1 } } },
            low: { $bottomN: { output: '$p', sortBy: { p: -1 }, n: 2 } },
            max: { $maxN: { input: '$p', n: 2 } },
          },
        },
      ])
      .toArray();
    expect(row).toEqual({
      _id: null,
      top: Decimal128.fromString('10.5'),
      low: [5, Decimal128.fromString('0.5')],
      max: [Decimal128.fromString('10.5'), 7.25],
    });
  });
});
