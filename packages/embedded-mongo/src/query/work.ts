/**
 * How long one command may hold the engine's single thread. A command's long evaluations (document scans, per-document
 * pipeline stages, an update computed over many documents) are `Task`s run by the command's `Work`:
 *
 * - A task runs synchronously while it fits one slice (`SLICE_MS`), so short commands never leave the event loop.
 *   Past that, it continues in slices with a turn of the event loop between them, where other connections' commands
 *   run (the command's connection waits for its reply, as with MongoDB's yielding).
 * - Evaluations that run regexes are guarded (guard.ts): a watchdog stops a slice at `SLICE_MS + REGEX_MS`. A slice
 *   starts documents only within its first `SLICE_MS`, so a stopped slice means one document has run `REGEX_MS`.
 *   When a single regex execution alone has run that long while the thread had the CPU, or, on a starved thread,
 *   when its runs alone, each in a turn of its own, take `REGEX_MS` of CPU time in all (trySuspect), it is abandoned (it answers no match from then on, as MongoDB answers when PCRE2
 *   reaches its match limit; an aggregation expression's fails the command with 51156); either way the document is
 *   evaluated again. A document that is slow without any one execution being so gets the whole of a turn, doubled at
 *   each try.
 * - `maxTimeMS` ends the command with 50 MaxTimeMSExpired when its deadline passes, also inside a regex (the
 *   watchdog's timeout is never past the deadline); a client that disconnects ends it with 279 at its next turn.
 *
 * So another connection's command waits at most about SLICE_MS + REGEX_MS (270 ms of this thread's time) behind any
 * command, except behind a single document whose evaluation is slow without any one regex execution being slow, and
 * behind stages that need all their input at once ($group, $sort, ...), which run in one turn.
 */
import { existsSync, readFileSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { MongoCommandError } from '../errors.js';
import { regexLimitError, runGuarded, type RegexBudget, type RunningRegex } from './guard.js';

export type Maybe<T> = T | Promise<T>;

/** `fn(value)`, synchronously when `value` is not a promise. */
export function then<T, U>(value: Maybe<T>, fn: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

export interface Task {
  /**
   * Works until done (true) or until `until` (`performance.now()`) passes, checked between items with at least one
   * item per call (false), and at most `maxItems` items. An item interrupted by the watchdog stays pending: the next
   * call starts with it.
   */
  step(until: number, maxItems: number): boolean;
  /** Before the command gives up the thread: stop depending on structures that other commands may change. */
  suspend?(): void;
}

export interface WorkLimits {
  /** Work done in one turn before other connections' commands run. */
  sliceMs: number;
  /** How long one regex execution may run before it is abandoned. */
  regexMs: number;
}

export const DEFAULT_WORK_LIMITS: WorkLimits = { sliceMs: 20, regexMs: 250 };

export const maxTimeExpired = () => new MongoCommandError(50, 'operation exceeded time limit');

export class Work implements RegexBudget {
  private readonly abandoned = new Map<RegExp, Set<string>>();
  /** The next guarded attempt evaluates only the pending item, with `budget` ms. */
  private single = false;
  private budget: number;
  /** A regex execution the watchdog stopped, to be tried alone before anything else (trySuspect). */
  private suspect: Suspect | null = null;

  constructor(
    /** `Date.now()` past which the command fails with MaxTimeMSExpired (from `maxTimeMS`). */
    readonly deadline?: number,
    private readonly cancelled: () => boolean = () => false,
    private readonly limits: WorkLimits = DEFAULT_WORK_LIMITS,
    /** CPU time of the engine's thread in ms (injectable, so that a starved thread can be tested). */
    private readonly threadCpu: () => number = threadCpuMs,
  ) {
    this.budget = limits.regexMs;
  }

  checkDeadline(): void {
    if (this.deadline !== undefined && Date.now() > this.deadline) throw maxTimeExpired();
  }

  isAbandoned(regex: RegExp, input: string): boolean {
    return this.abandoned.size > 0 && this.abandoned.get(regex)?.has(input) === true;
  }

  /** Runs `task` to its end; `guarded` when its evaluation runs regexes. */
  run(task: Task, guarded: boolean): Maybe<void> {
    if (this.attempt(task, guarded)) return;
    return this.resume(task, guarded);
  }

  /** Runs `task` to its end without giving up the thread, still under the regex guard (for short critical work). */
  runNow(task: Task, guarded: boolean): void {
    while (!this.attempt(task, guarded));
  }

  private async resume(task: Task, guarded: boolean): Promise<void> {
    for (;;) {
      task.suspend?.();
      await nextTurn();
      if (this.cancelled()) throw new MongoCommandError(279, 'operation was interrupted because a client disconnected');
      this.checkDeadline();
      if (this.attempt(task, guarded)) return;
    }
  }

  /** One turn of `task`; true when it is done. */
  private attempt(task: Task, guarded: boolean): boolean {
    if (this.suspect) {
      this.trySuspect(this.suspect);
      return false;
    }
    const { sliceMs, regexMs } = this.limits;
    const start = performance.now();
    const until = this.single ? Infinity : start + sliceMs;
    const maxItems = this.single ? 1 : Infinity;
    if (!guarded) return task.step(until, maxItems);
    const allowed = this.single ? this.budget : sliceMs + regexMs;
    const remaining = this.deadline === undefined ? Infinity : this.deadline - Date.now();
    const cpuAtStart = this.threadCpu();
    const result = runGuarded(this, () => task.step(until, maxItems), Math.min(allowed, Math.max(remaining, 1)));
    if (result.completed) {
      this.single = false;
      this.budget = regexMs;
      return result.value;
    }
    this.checkDeadline();
    if (remaining <= allowed) throw maxTimeExpired();
    const culprit = result.running;
    // Timers are not exact to the millisecond: an execution that ran nearly its budget is the one to blame, when the
    // thread had the CPU all along; when it did not, a turn of its own tells (trySuspect).
    if (culprit && performance.now() - culprit.since >= regexMs * 0.9) {
      const share = (this.threadCpu() - cpuAtStart) / (performance.now() - start);
      if (share >= 0.9) this.abandon(culprit);
      else this.suspect = { ...culprit, cpuSpent: 0 };
      this.budget = regexMs;
    } else {
      this.budget = this.single ? this.budget * 2 : regexMs;
    }
    this.single = true;
    return false;
  }

  /**
   * A turn for one regex execution the watchdog stopped: wall-clock time also counts time the thread did not run
   * (a loaded machine, a garbage collection), so the execution runs again alone and the CPU time it takes decides.
   * Done within its turn: it is innocent, the item is evaluated again as it was. Otherwise it is abandoned (an
   * aggregation expression's fails the command) once its runs have taken `regexMs` of CPU in all. Each run is one
   * turn of at most `sliceMs + regexMs` of wall-clock time, with other connections' commands between them: a trial
   * sized to get `regexMs` of CPU in one turn held the thread for seconds on a loaded machine (a bystander's ping
   * waited 1 490 ms at a load of 10 on 2 cores). So on a starved thread an execution that needs less than `regexMs`
   * of CPU, but more than one turn gets, is abandoned too: the budget of one evaluation is also one turn.
   */
  private trySuspect(suspect: Suspect): void {
    const { sliceMs, regexMs } = this.limits;
    const turn = sliceMs + regexMs;
    const remaining = this.deadline === undefined ? Infinity : this.deadline - Date.now();
    const cpuBefore = this.threadCpu();
    // The built-in exec: neither the abandoned executions nor the tracking of guard.ts apply to this run.
    const result = runGuarded(this, () => RegExp.prototype.exec.call(suspect.regex, suspect.input), Math.min(turn, Math.max(remaining, 1)));
    suspect.cpuSpent += this.threadCpu() - cpuBefore;
    suspect.regex.lastIndex = 0;
    if (result.completed) {
      this.suspect = null;
      return;
    }
    this.checkDeadline();
    if (remaining <= turn) throw maxTimeExpired();
    if (suspect.cpuSpent < regexMs * 0.9) return;
    this.suspect = null;
    this.abandon(suspect);
  }

  /** From now on, in this command, `regex` on `input` answers no match (an aggregation expression's fails the command). */
  private abandon({ regex, input }: RunningRegex): void {
    if (regex.operator) throw regexLimitError(regex.operator);
    let inputs = this.abandoned.get(regex);
    if (!inputs) this.abandoned.set(regex, (inputs = new Set()));
    inputs.add(input);
  }
}

interface Suspect extends RunningRegex {
  /** CPU time its runs on trial have taken, in ms. */
  cpuSpent: number;
}

const THREAD_STAT = '/proc/thread-self/stat';
const hasThreadStat = existsSync(THREAD_STAT);

/** CPU time of this thread in ms (Linux; elsewhere the process's), read around the turns of evaluations with regexes. */
function threadCpuMs(): number {
  if (!hasThreadStat) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
  // Fields after the command name: state is the first, utime and stime the 12th and 13th, in clock ticks (1/100 s).
  const fields = readFileSync(THREAD_STAT, 'latin1').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
