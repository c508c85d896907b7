import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ObjectId } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { DurableTimer } from '../../src/lanes/durable-timer.schema.js';
import { DurableTimers, MAX_TIMER_FAILURES, type FiredTimer } from '../../src/lanes/durable-timers.js';
import { LaneStore } from '../../src/lanes/lane-store.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

const MINUTE = 60_000;
const settle = (ms = 600) => new Promise((resolve) => setTimeout(resolve, ms));

/** Durable timers (src/lanes/durable-timers.ts): every deadline's one mechanism. */
describe('durable timers', () => {
  const clock = new TestClock();
  let t: TestApp;
  let timers: DurableTimers;
  const fired: FiredTimer[] = [];
  const company = new ObjectId().toHexString();
  const otherCompany = new ObjectId().toHexString();
  let failNext = 0;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    timers = t.app.get(DurableTimers);
    timers.register<Record<string, unknown>>('probe', async (timer) => {
      if (failNext > 0) {
        failNext -= 1;
        throw new Error('handler failed');
      }
      fired.push(timer);
    });
  });
  afterAll(() => t.close());
  afterEach(() => {
    fired.length = 0;
    jest.restoreAllMocks();
  });

  const stored = (key: string) => t.model<DurableTimer>(DurableTimer.name).findOne({ _id: `probe:${key}`, companyId: company }).lean();
  const firedFor = (key: string) => fired.filter((timer) => timer.key === key);

  it('fires once, at its due time, with its company, key and payload, and is then gone', async () => {
    const dueAt = new Date(clock.now().getTime() + 10 * MINUTE);
    await timers.set(company, 'probe', 'a', dueAt, { conversationId: 'c1' });
    await settle();
    expect(firedFor('a')).toHaveLength(0);

    clock.advance(10 * MINUTE);
    await waitFor(() => firedFor('a').length === 1, { message: 'the timer to fire' });
    const [timer] = firedFor('a');
    expect(timer).toMatchObject({ id: 'probe:a', kind: 'probe', key: 'a', companyId: company, dueAt, payload: { conversationId: 'c1' } });
    expect(timer.firedAt.getTime()).toBeGreaterThanOrEqual(dueAt.getTime());
    expect(timer.firedAt.getTime() - dueAt.getTime()).toBeLessThan(5000);
    await waitFor(async () => (await stored('a')) === null, { message: 'the fired timer to be removed' });
    await settle();
    expect(firedFor('a')).toHaveLength(1);
  });

  it('set again before it is due, fires only at the new time', async () => {
    const first = new Date(clock.now().getTime() + 5 * MINUTE);
    const second = new Date(clock.now().getTime() + 20 * MINUTE);
    await timers.set(company, 'probe', 'moved', first);
    await timers.set(company, 'probe', 'moved', second, { moved: true });
    expect(await timers.dueAt(company, 'probe', 'moved')).toEqual(second);

    clock.advance(6 * MINUTE);
    await settle();
    expect(firedFor('moved')).toHaveLength(0);
    clock.advance(14 * MINUTE);
    await waitFor(() => firedFor('moved').length === 1, { message: 'the moved timer to fire' });
    expect(firedFor('moved')[0]).toMatchObject({ dueAt: second, payload: { moved: true } });
  });

  it('cancelled, never fires; another company cannot cancel it', async () => {
    const dueAt = new Date(clock.now().getTime() + MINUTE);
    await timers.set(company, 'probe', 'cancelled', dueAt);
    await timers.set(company, 'probe', 'kept', dueAt);
    await timers.cancel(company, 'probe', 'cancelled');
    await timers.cancel(otherCompany, 'probe', 'kept');
    expect(await timers.dueAt(company, 'probe', 'cancelled')).toBeNull();
    expect(await timers.dueAt(otherCompany, 'probe', 'kept')).toBeNull();

    clock.advance(MINUTE);
    await waitFor(() => firedFor('kept').length === 1, { message: 'the kept timer to fire' });
    await settle();
    expect(firedFor('cancelled')).toHaveLength(0);
  });

  it('a failed firing is retried with backoff until it succeeds', async () => {
    failNext = 2;
    await timers.set(company, 'probe', 'flaky', clock.now());
    await waitFor(async () => (await stored('flaky'))?.failures === 2, { message: 'two failed firings' });
    const retrying = await stored('flaky');
    expect(retrying!.nextDueAt!.getTime()).toBeGreaterThan(retrying!.dueAt.getTime());
    clock.advance(MINUTE);
    await waitFor(() => firedFor('flaky').length === 1, { message: 'the retry to fire' });
    await waitFor(async () => (await stored('flaky')) === null, { message: 'the timer to be removed' });
  });

  it(`is dropped after ${MAX_TIMER_FAILURES} failed firings`, async () => {
    failNext = MAX_TIMER_FAILURES;
    await timers.set(company, 'probe', 'broken', clock.now());
    for (let failures = 1; failures < MAX_TIMER_FAILURES; failures += 1) {
      // The clock moves to the retry only once the failure is recorded, not while a firing is under way.
      const retrying = await waitFor(async () => {
        const timer = await stored('broken');
        return timer?.failures === failures && timer.leaseOwner === null && timer;
      }, { message: `failed firing ${failures}` });
      clock.advance(retrying.nextDueAt!.getTime() - clock.now().getTime());
    }
    await waitFor(async () => (await stored('broken')) === null, { message: 'the broken timer to be dropped' });
    expect(failNext).toBe(0);
    expect(firedFor('broken')).toHaveLength(0);
  });

  it('stopped after firing and before its removal, fires again once its lease expires, with the same id and due time', async () => {
    const remove = jest.spyOn(LaneStore.prototype, 'remove').mockRejectedValueOnce(new Error('process killed'));
    const dueAt = clock.now();
    await timers.set(company, 'probe', 'crashed', dueAt);
    await waitFor(() => firedFor('crashed').length === 1, { message: 'the first firing' });
    await waitFor(() => remove.mock.calls.length === 1, { message: 'the removal that fails' });
    await settle();
    expect(firedFor('crashed')).toHaveLength(1);
    expect(await stored('crashed')).not.toBeNull();

    clock.advance(MINUTE);
    await waitFor(() => firedFor('crashed').length === 2, { message: 'the firing after the lease expired' });
    expect(firedFor('crashed').map((timer) => [timer.id, timer.dueAt])).toEqual([
      ['probe:crashed', dueAt],
      ['probe:crashed', dueAt],
    ]);
    await waitFor(async () => (await stored('crashed')) === null, { message: 'the timer to be removed' });
  });
});

describe('durable timers in two API processes on one database', () => {
  let engine: EmbeddedMongo;
  let a: TestApp;
  let b: TestApp;
  const clock = new TestClock();
  const firings = new Map<string, string[]>();

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    const env = { MONGODB_URI: `${engine.uri}timers` };
    a = await createTestApp({ env, clock });
    b = await createTestApp({ env, clock });
    for (const [name, app] of [['a', a], ['b', b]] as const) {
      app.app.get(DurableTimers).register('probe', async (timer) => {
        // A firing takes a moment, as a real one's writes do, so that both processes claim while others run.
        await new Promise((resolve) => setTimeout(resolve, 5));
        firings.set(timer.id, [...(firings.get(timer.id) ?? []), name]);
      });
    }
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await engine.stop();
  });

  it('fires each of 200 timers due in the same minute exactly once, shared between the processes', async () => {
    const company = new ObjectId().toHexString();
    const dueAt = new Date(clock.now().getTime() + MINUTE);
    const keys = Array.from({ length: 200 }, (_, index) => `k${index}`);
    await Promise.all(keys.map((key, index) => (index % 2 ? a : b).app.get(DurableTimers).set(company, 'probe', key, dueAt)));
    clock.advance(MINUTE);
    await waitFor(() => firings.size === keys.length, { timeoutMs: 15_000, message: 'every timer to fire' });
    await settle();
    expect([...firings.values()].filter((by) => by.length !== 1)).toEqual([]);
    const byProcess = [...firings.values()].flat();
    expect(byProcess.filter((name) => name === 'a').length).toBeGreaterThan(0);
    expect(byProcess.filter((name) => name === 'b').length).toBeGreaterThan(0);
    expect(await a.model<DurableTimer>(DurableTimer.name).countDocuments({ companyId: company })).toBe(0);
  });
});
