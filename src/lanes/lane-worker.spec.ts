import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { ClaimedLane, LaneFields } from './lane.schema.js';
import type { LaneStore } from './lane-store.js';
import { Clock } from './clock.js';
import { LaneWorker } from './lane-worker.js';
import { POLL_INTERVAL_MS } from './poll-interval.js';

type Lane = ClaimedLane<LaneFields>;

/** A store handing out `lanes` one claim at a time (null once they are gone), and releasing with `dueAgain`. */
function fakeStore(lanes: Lane[], dueAgain: boolean) {
  const queue = [...lanes];
  return {
    claim: jest.fn(async () => queue.shift() ?? null),
    renew: jest.fn(async () => true),
    release: jest.fn(async () => dueAgain),
  };
}

const lane = (id: string): Lane => ({ _id: id, queueVersion: 0, leaseOwner: 'me', leaseUntil: new Date() }) as Lane;

/** What the worker does after a turn: look for more lanes only when that can find one. */
describe('LaneWorker after a turn', () => {
  let worker: LaneWorker;

  beforeEach(() => {
    // The poll is not part of what is tested: its clock stands still.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    worker = new LaneWorker(new Clock());
  });
  afterEach(async () => {
    await worker.beforeApplicationShutdown();
    jest.useRealTimers();
  });

  async function runOnce(store: ReturnType<typeof fakeStore>, maxInFlight: number): Promise<void> {
    worker.register({
      name: 'test',
      store: store as unknown as LaneStore<LaneFields>,
      leaseMs: 1000,
      maxInFlight,
      run: async (_lane, turn) => turn.release(undefined),
    });
    worker.onApplicationBootstrap();
    // Claims, turns and releases settle within a few turns of the event loop.
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  }

  it('does not claim again when the last search found nothing due and the turn left its lane with nothing due', async () => {
    const store = fakeStore([lane('a')], false);
    await runOnce(store, 4);
    expect(store.release).toHaveBeenCalledTimes(1);
    // The lane, then the empty answer that ended the search; the turn's end adds none.
    expect(store.claim).toHaveBeenCalledTimes(2);
  });

  it('claims again when the turn left its lane due', async () => {
    const store = fakeStore([lane('a')], true);
    await runOnce(store, 4);
    expect(store.claim).toHaveBeenCalledTimes(3);
  });

  it('claims again when the search stopped for want of room', async () => {
    const store = fakeStore([lane('a'), lane('b')], false);
    await runOnce(store, 1);
    // a (room full), then b after a's turn, then the empty answer; b's turn adds none.
    expect(store.claim).toHaveBeenCalledTimes(3);
    expect(store.release).toHaveBeenCalledTimes(2);
  });
});

/** The process's one clock: poll listeners (the event feed's open streams) run on it, not on timers of their own. */
describe('LaneWorker poll listeners', () => {
  let worker: LaneWorker;

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    worker = new LaneWorker(new Clock());
    worker.onApplicationBootstrap();
  });
  afterEach(async () => {
    await worker.beforeApplicationShutdown();
    jest.useRealTimers();
  });

  it('calls a listener on every poll until it stops listening, past one that throws, and none after shutdown', async () => {
    const listener = jest.fn();
    worker.onPoll(() => {
      throw new Error('a failing listener');
    });
    const stop = worker.onPoll(listener);
    jest.advanceTimersByTime(3 * POLL_INTERVAL_MS);
    expect(listener).toHaveBeenCalledTimes(3);
    stop();
    jest.advanceTimersByTime(2 * POLL_INTERVAL_MS);
    expect(listener).toHaveBeenCalledTimes(3);

    const late = jest.fn();
    worker.onPoll(late);
    await worker.beforeApplicationShutdown();
    jest.advanceTimersByTime(2 * POLL_INTERVAL_MS);
    expect(late).not.toHaveBeenCalled();
  });
});
