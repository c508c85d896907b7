import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, type Db } from 'mongodb';
import { guardedRegex } from '../src/query/guard.js';
import { Work } from '../src/query/work.js';
import { engineFixture, type Loose } from './fixture.js';

/**
 * One command may not hold the engine's thread for long (src/query/work.ts): a command with maxTimeMS ends on time
 * whatever its regexes do, and without maxTimeMS other connections are served between its turns. The regex budget is
 * lowered to 100 ms here so the tests stay quick; `/(x+x+)+y/` backtracks exponentially over a run of x's (28 of
 * them take tens of seconds), 18 take a few milliseconds.
 */
const REGEX_MS = 100;
const SLICE_MS = 20;
/**
 * Slack for a loaded machine (the bounds are CPU time of the engine's thread; under load a turn takes longer in wall
 * time). Generous on purpose: without the mechanisms tested here, each of these waits is a whole catastrophic regex
 * execution, many seconds.
 */
const SLACK_MS = 1500;
const EVIL = /(x+x+)+y/;
/** Runs of x's long enough that `EVIL` takes seconds over each (every one different: an abandoned execution is per input). */
const catastrophic = (n = 0) => 'x'.repeat(28 + n);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU time (ms) this process spends while `fn` runs: the engine's thread, mostly, whatever the machine's load. */
async function cpuTime<T>(fn: () => Promise<T>): Promise<{ cpu: number; result: T }> {
  const before = process.cpuUsage();
  const result = await fn();
  const { user, system } = process.cpuUsage(before);
  return { cpu: (user + system) / 1000, result };
}

/** Pings on a connection of its own while `during` runs; answers the longest ping and how long `during` took, in ms. */
/**
 * Runs `during` while `db` pings every 5 ms: the longest ping, how long `during` took, and how many pings were answered
 * before it ended. A command that held the thread to its end lets none through; one that gives other connections a
 * turn every slice lets one through per slice, however slow a busy machine makes each slice in wall-clock time.
 */
async function longestPing(db: Db, during: () => Promise<unknown>): Promise<{ longest: number; took: number; servedMeanwhile: number; result: unknown }> {
  let done = false;
  let longest = 0;
  let served = 0;
  const start = performance.now();
  const pinger = (async () => {
    while (!done) {
      const start = performance.now();
      await db.command({ ping: 1 });
      longest = Math.max(longest, performance.now() - start);
      served += 1;
      await sleep(5);
    }
  })();
  try {
    const result = await during();
    return { longest, took: performance.now() - start, servedMeanwhile: served, result };
  } finally {
    done = true;
    await pinger;
  }
}

describe('embedded engine: no command holds the thread for long (regexes, long scans, maxTimeMS)', () => {
  const fx = engineFixture('availability', { limits: { regexMs: REGEX_MS, sliceMs: SLICE_MS } });
  let bystander: MongoClient;
  let other: Db;

  beforeAll(async () => {
    bystander = await new MongoClient(fx.engine.uri).connect();
    other = bystander.db('availability');
    await fx.db.collection<Loose>('strings').insertMany([
      { _id: 1, s: catastrophic(0), n: 1 },
      { _id: 2, s: 'xxy', n: 2 },
      { _id: 3, s: catastrophic(1), n: 3 },
      { _id: 4, s: 'x'.repeat(10), n: 4 },
      { _id: 5, s: catastrophic(2), n: 5 },
      { _id: 6, s: catastrophic(3), n: 6 },
    ]);
  });

  afterAll(async () => {
    await bystander.close();
  });

  it('maxTimeMS ends a find, an aggregation and an update on time, inside a regex', async () => {
    const strings = fx.db.collection<Loose>('strings');
    // Deadlines shorter than the regex budget: the command ends inside the regex's first execution.
    let start = performance.now();
    await expect(strings.find({ s: EVIL }).maxTimeMS(60).toArray()).rejects.toMatchObject({ code: 50, codeName: 'MaxTimeMSExpired' });
    expect(performance.now() - start).toBeLessThan(60 + SLACK_MS);
    start = performance.now();
    const pipeline = [{ $project: { hit: { $regexMatch: { input: '$s', regex: EVIL } } } }, { $group: { _id: '$hit' } }];
    await expect(strings.aggregate(pipeline, { maxTimeMS: 60 }).toArray()).rejects.toMatchObject({ code: 50 });
    expect(performance.now() - start).toBeLessThan(60 + SLACK_MS);
    start = performance.now();
    const update = fx.db.command({ update: 'strings', updates: [{ q: { $or: [{ s: EVIL }, { n: { $gte: 0 } }] }, u: { $set: { hit: true } }, multi: true }], maxTimeMS: 60 });
    await expect(update).rejects.toMatchObject({ code: 50 });
    expect(performance.now() - start).toBeLessThan(60 + SLACK_MS);
    // A longer deadline outlives one abandoned execution but not two.
    start = performance.now();
    await expect(strings.countDocuments({ s: EVIL }, { maxTimeMS: SLICE_MS + REGEX_MS + 40 })).rejects.toMatchObject({ code: 50 });
    expect(performance.now() - start).toBeLessThan(SLICE_MS + REGEX_MS + 40 + SLACK_MS);
    expect(await strings.countDocuments({ hit: true })).toBe(0);
  });

  it('a regex execution past the budget matches nothing (as at PCRE2’s match limit), and others are served meanwhile', async () => {
    const strings = fx.db.collection<Loose>('strings');
    const { servedMeanwhile, result } = await longestPing(other, () => strings.find({ s: EVIL }).toArray());
    expect((result as Loose[]).map((d) => d._id)).toEqual([2]);
    // Four executions stopped, each tried alone and abandoned: pings were answered between them, not after the command.
    expect(servedMeanwhile).toBeGreaterThanOrEqual(2);
    // An abandoned execution is no match: its negation matches, as MongoDB answers.
    expect((await strings.find({ s: { $not: EVIL } }).toArray()).map((d) => d._id)).toEqual([1, 3, 4, 5, 6]);
    expect(await strings.countDocuments({ s: { $in: [EVIL, /^xxy$/] } })).toBe(1);
    // In $pull, the element stays.
    await fx.db.collection<Loose>('tags').insertOne({ _id: 1, tags: [catastrophic(), 'xxy', 'a'] });
    const pulled = await fx.db.collection<Loose>('tags').updateOne({ _id: 1 }, { $pull: { tags: EVIL } } as Loose);
    expect(pulled.modifiedCount).toBe(1);
    expect((await fx.db.collection<Loose>('tags').findOne({ _id: 1 }))!.tags).toEqual([catastrophic(), 'a']);
  });

  it('$regexMatch, $regexFind, $regexFindAll past the budget fail with 51156, as MongoDB does at the match limit', async () => {
    const strings = fx.db.collection<Loose>('strings');
    for (const op of ['$regexMatch', '$regexFind', '$regexFindAll']) {
      const { cpu, result } = await cpuTime(() => strings.aggregate([{ $project: { m: { [op]: { input: '$s', regex: EVIL } } } }]).toArray().catch((e: unknown) => e));
      expect(result).toMatchObject({ code: 51156, message: expect.stringContaining(op) });
      // One turn and one trial of the execution, each about REGEX_MS of CPU.
      expect(cpu).toBeLessThan(4 * REGEX_MS + SLACK_MS / 3);
    }
    const found = await strings.aggregate([{ $match: { _id: 2 } }, { $project: { _id: 0, m: { $regexFindAll: { input: 'xaxbx', regex: /x(.)?/ } } } }]).toArray();
    expect(found).toEqual([{ m: [{ match: 'xa', idx: 0, captures: ['a'] }, { match: 'xb', idx: 2, captures: ['b'] }, { match: 'x', idx: 4, captures: [null] }] }]);
  });

  it('a long scan, a long pipeline stage and a long multi-update give other connections a turn every slice', async () => {
    const slow = fx.db.collection<Loose>('slow');
    await slow.insertMany(Array.from({ length: 60 }, (_, i) => ({ _id: i, s: 'x'.repeat(18), tags: ['x'.repeat(18)], n: i })));
    const scan = await longestPing(other, () => slow.countDocuments({ s: EVIL }));
    expect(scan.result).toBe(0);
    const stage = await longestPing(other, () =>
      slow.aggregate([{ $addFields: { hit: { $regexMatch: { input: '$s', regex: EVIL } } } }, { $match: { hit: false } }, { $count: 'n' }]).toArray(),
    );
    expect(stage.result).toEqual([{ n: 60 }]);
    const update = await longestPing(other, () => slow.updateMany({ n: { $gte: 0 } }, { $pull: { tags: EVIL }, $set: { seen: true } } as Loose));
    expect(update.result).toMatchObject({ matchedCount: 60 });
    // Each took several slices (a few ms per document); pings were answered between them, not after the command.
    for (const { servedMeanwhile, took } of [scan, stage, update]) {
      expect(took).toBeGreaterThan(4 * SLICE_MS);
      expect(servedMeanwhile).toBeGreaterThanOrEqual(2);
    }
  });

  it('a command whose client disconnected ends at its next turn: its writes are not made', async () => {
    await fx.db.collection<Loose>('leaving').insertMany([0, 1, 2, 3].map((i) => ({ _id: i, s: catastrophic(i) })));
    const leaving = await new MongoClient(fx.engine.uri, { socketTimeoutMS: 150 }).connect();
    try {
      const filter: Loose = { $or: [{ s: EVIL }, { _id: { $gte: 0 } }] };
      await expect(leaving.db('availability').collection('leaving').updateMany(filter, { $set: { gone: true } })).rejects.toThrow();
    } finally {
      await leaving.close();
    }
    // Had it gone on, the update would have matched every document after about 4 × REGEX_MS.
    await sleep(5 * REGEX_MS + SLACK_MS / 2);
    expect(await fx.db.collection<Loose>('leaving').countDocuments({ gone: true })).toBe(0);
  });
});

describe('embedded engine: a regex on trial on a starved thread', () => {
  it('is tried in turns no longer than slice + regex budget, with other work between them, then abandoned', async () => {
    const limits = { sliceMs: SLICE_MS, regexMs: REGEX_MS };
    // A thread that gets a tenth of a CPU (a machine at a load of 10 on 2 cores, say).
    const origin = performance.now();
    const starvedCpu = () => (performance.now() - origin) / 10;
    const work = new Work(undefined, () => false, limits, starvedCpu);
    const evil = guardedRegex(EVIL.source, EVIL.flags);
    const inputs = [catastrophic(), 'xxy'];
    const matched: boolean[] = [];
    const task = {
      step: () => {
        while (matched.length < inputs.length) matched.push(evil.test(inputs[matched.length]));
        return true;
      },
    };
    // The longest the event loop went without a turn while the command ran.
    let longestGap = 0;
    let last = performance.now();
    let turns = 0;
    const ticker = setInterval(() => {
      longestGap = Math.max(longestGap, performance.now() - last);
      last = performance.now();
      turns += 1;
    }, 1);
    try {
      await work.run(task, true);
    } finally {
      clearInterval(ticker);
    }
    expect(matched).toEqual([false, true]);
    // The trial got its 100 ms of CPU (here 1 000 ms of wall-clock time) in turns, not in one: 8 on an idle machine,
    // the most there can be, so a busy one sees fewer; half of them still tells turns from one long run.
    expect(turns).toBeGreaterThanOrEqual(4);
    expect(longestGap).toBeLessThan(SLICE_MS + REGEX_MS + SLACK_MS / 3);
  });
});
