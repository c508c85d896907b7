import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { LaneFields, ClaimedLane } from './lane.schema.js';
import type { LaneStore } from './lane-store.js';
import { Clock } from './clock.js';
import { POLL_INTERVAL_MS } from './poll-interval.js';

/**
 * What a turn on a claimed lane gets: whether to go on (false on shutdown), and its lane's lease to renew
 * (false once lost or no longer eligible) and to release (see LaneStore.release).
 */
export interface LaneTurn {
  keepGoing(): boolean;
  renew(): Promise<boolean>;
  release(nextDueAt: Date | null | undefined, update?: Record<string, unknown>): Promise<void>;
}

/**
 * A kind of lane the worker serves: where its lanes are (`store`), how long a claim is leased, how many of
 * its turns may run at once in this process, and what one turn does. A turn must release its lane (or leave
 * the lease to expire when it cannot: the lane is then claimed again, so its work must be safe to redo).
 */
export interface LaneKind<T extends LaneFields = LaneFields> {
  name: string;
  store: LaneStore<T>;
  leaseMs: number;
  maxInFlight: number;
  /** The field whose value names a lane's work in its backlog (e.g. the consumer of an event consumer's lane). */
  backlogLabel?: string;
  run(lane: ClaimedLane<T>, turn: LaneTurn): Promise<void>;
}

interface KindState {
  kind: LaneKind<any>;
  inFlight: Set<Promise<void>>;
  pumping: Promise<void> | null;
  pumpAgain: boolean;
  /** The last search found no due lane: a turn that ends need not search again unless it left its lane due. */
  drained: boolean;
}

/**
 * The one scheduler of background work in a process: webhook deliveries, the event log's consumers and the
 * scheduled jobs are all kinds of lanes it claims and runs. It looks for due lanes when something in this
 * process queues work (`wake`) and on one short poll for the rest. On shutdown it stops claiming and waits for
 * the turns in flight, each bounded by its kind.
 */
@Injectable()
export class LaneWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** The lease owner: unique per process and worker, and says where it runs. */
  readonly id = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  private readonly logger = new Logger(LaneWorker.name);
  private readonly kinds = new Map<string, KindState>();
  private readonly pollListeners = new Set<() => void>();
  private running = false;
  private poll?: NodeJS.Timeout;

  constructor(private readonly clock: Clock) {}

  /** Whether it claims work: from the application's bootstrap until its shutdown begins (readiness). */
  get isRunning(): boolean {
    return this.running;
  }

  /** The kinds of lane it serves, by name (metrics). */
  get registeredKinds(): LaneKind<any>[] {
    return [...this.kinds.values()].map((state) => state.kind);
  }

  /** Registers a kind of lane; modules call it when they initialise, before the worker starts. */
  register<T extends LaneFields>(kind: LaneKind<T>): void {
    if (this.kinds.has(kind.name)) throw new Error(`Lane kind ${kind.name} is registered twice`);
    this.kinds.set(kind.name, { kind, inFlight: new Set(), pumping: null, pumpAgain: false, drained: false });
  }

  onApplicationBootstrap(): void {
    this.running = true;
    // The scheduler's own clock, the process's only one: every other background job is a lane it finds due, or
    // (work of this process alone) a listener it calls on each poll.
    this.poll = setInterval(() => this.tick(), POLL_INTERVAL_MS).unref();
    this.wake();
  }

  /**
   * Calls `listener` on every poll until the returned function is called: for work of this process alone that
   * must look again each poll while it has something to look after (the event feed's open streams), which is
   * no lane since no other process could take it over.
   */
  onPoll(listener: () => void): () => void {
    this.pollListeners.add(listener);
    return () => this.pollListeners.delete(listener);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    clearInterval(this.poll);
    const states = [...this.kinds.values()];
    await Promise.all(states.flatMap((state) => state.pumping ?? []));
    await Promise.allSettled(states.flatMap((state) => [...state.inFlight]));
  }

  private tick(): void {
    this.wake();
    for (const listener of this.pollListeners) {
      try {
        listener();
      } catch (error) {
        this.logger.error({ err: error }, 'A poll listener failed');
      }
    }
  }

  /** Looks for due lanes of `kind` (every kind when omitted) now, or right after the search under way. */
  wake(kind?: string): void {
    if (!this.running) return;
    if (kind === undefined) {
      for (const state of this.kinds.values()) this.pump(state);
      return;
    }
    const state = this.kinds.get(kind);
    if (state) this.pump(state);
  }

  private pump(state: KindState): void {
    if (state.pumping) {
      state.pumpAgain = true;
      return;
    }
    state.pumping = this.claimWhileRoom(state).finally(() => {
      state.pumping = null;
      if (state.pumpAgain) this.pump(state);
    });
  }

  private async claimWhileRoom(state: KindState): Promise<void> {
    state.pumpAgain = false;
    const { kind } = state;
    try {
      while (this.running && state.inFlight.size < kind.maxInFlight) {
        const lane = await kind.store.claim(this.id, this.clock.now(), kind.leaseMs);
        state.drained = !lane;
        if (!lane) return;
        const ended = { dueAgain: false };
        this.track(state, kind.run(lane, this.turnOf(kind, lane, ended)), ended);
      }
    } catch (error) {
      // The database is unreachable or failing: the next poll tries again.
      state.drained = true;
      this.logger.error({ err: error }, `Could not claim ${kind.name} lanes`);
    }
  }

  private turnOf<T extends LaneFields>(kind: LaneKind<T>, lane: ClaimedLane<T>, ended: { dueAgain: boolean }): LaneTurn {
    return {
      keepGoing: () => this.running,
      renew: () => kind.store.renew(lane, this.clock.now(), kind.leaseMs),
      release: async (nextDueAt, update) => {
        ended.dueAgain = await kind.store.release(lane, this.clock.now(), nextDueAt, update);
      },
    };
  }

  /**
   * Runs a turn; when it ends, searches again only if that can find something: the searches stopped for want of
   * room, or this turn left its lane due. Otherwise a wake or the poll starts the next search, which spares an
   * empty claim per turn.
   */
  private track(state: KindState, run: Promise<void>, ended: { dueAgain: boolean }): void {
    const tracked: Promise<void> = run
      .catch((error: unknown) => {
        // The lane stays leased until its lease expires, then any worker takes it up again.
        this.logger.error({ err: error }, `A ${state.kind.name} turn failed to complete`);
      })
      .finally(() => {
        state.inFlight.delete(tracked);
        if (!state.drained || ended.dueAgain) this.pump(state);
      });
    state.inFlight.add(tracked);
  }
}
