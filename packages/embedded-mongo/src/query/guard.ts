/**
 * Regular expressions whose evaluation can be cut short. JavaScript cannot interrupt a running RegExp from its own
 * thread, but V8 can terminate the thread's JavaScript from a watchdog: `node:vm` with a `timeout` does exactly that,
 * around any function. `runGuarded` runs a piece of pure evaluation (matching documents, computing a pipeline stage on
 * copies) under such a watchdog; it never runs code that changes the engine's state, so stopping it anywhere is safe.
 *
 * Every regex of a filter or expression is a `GuardedRegExp` (filters.ts, regex.ts, json-schema.ts). While a guarded
 * evaluation runs, each of its executions notes what it runs and since when, so that an interrupted evaluation tells
 * which execution it stopped (work.ts decides what that means). An execution the command has abandoned answers no
 * match at once, as MongoDB answers for a regex that reaches PCRE2's match limit; in `$regexMatch`, `$regexFind` and
 * `$regexFindAll` it fails the command with 51156, as MongoDB does there.
 */
import vm from 'node:vm';
import { MongoCommandError } from '../errors.js';

/** The regex execution in progress in a guarded evaluation. */
export interface RunningRegex {
  regex: GuardedRegExp;
  input: string;
  /** `performance.now()` when it started. */
  since: number;
}

/** What a guarded evaluation's regexes consult: the executions its command abandoned. */
export interface RegexBudget {
  isAbandoned(regex: RegExp, input: string): boolean;
}

let activeBudget: RegexBudget | null = null;
let running: RunningRegex | null = null;

/** The error MongoDB answers when a regex of an aggregation expression reaches PCRE2's match limit. */
export const regexLimitError = (operator: string) =>
  new MongoCommandError(51156, `Error occurred while executing the regular expression in ${operator}. Result code: match limit exceeded`);

export class GuardedRegExp extends RegExp {
  /** The aggregation expression this regex belongs to (its abandonment is an error there), if any. */
  operator?: string;

  override exec(input: string): RegExpExecArray | null {
    const budget = activeBudget;
    if (budget === null) return super.exec(input);
    if (budget.isAbandoned(this, input)) {
      this.lastIndex = 0;
      if (this.operator) throw regexLimitError(this.operator);
      return null;
    }
    const outer = running;
    running = { regex: this, input, since: performance.now() };
    // No try/finally: when the watchdog terminates this execution, `running` must still name it.
    const result = super.exec(input);
    running = outer;
    return result;
  }
}

/** One GuardedRegExp per pattern and flags (bounded), so that every compilation of a filter shares its regex objects. */
const shared = new Map<string, GuardedRegExp>();

/**
 * The guarded regex of `source` and `flags`. mingo copies a filter's regexes as plain RegExps each time it compiles
 * one, so the engine's query operators take theirs from here: a command that abandoned an execution finds the same
 * regex again when a filter is compiled anew (per document in updates, say).
 */
export function guardedRegex(source: string, flags: string): GuardedRegExp {
  const key = `${flags}/${source}`;
  let re = shared.get(key);
  if (!re) {
    if (shared.size >= 10_000) shared.clear();
    shared.set(key, (re = new GuardedRegExp(source, flags)));
  }
  return re;
}

/** Operators and `$jsonSchema` keywords that run regexes given as strings. */
const REGEX_KEYS = new Set(['$regex', '$regexMatch', '$regexFind', '$regexFindAll', 'pattern', 'patternProperties']);

/** Whether `value` holds a regular expression anywhere (a filter, an expression, an update, a validator). */
export function hasRegex(value: unknown): boolean {
  if (value instanceof RegExp) return true;
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(hasRegex);
  if ((value as { _bsontype?: string })._bsontype !== undefined) return (value as { _bsontype?: string })._bsontype === 'BSONRegExp';
  for (const [k, v] of Object.entries(value)) if (REGEX_KEYS.has(k) || hasRegex(v)) return true;
  return false;
}

const context = vm.createContext({});
const script = new vm.Script('run()', { filename: 'embedded-mongo-guard' });

export type Guarded<T> = { completed: true; value: T } | { completed: false; running: RunningRegex | null };

/**
 * Runs `fn` with at most `timeoutMs` of wall-clock time. When the watchdog stops it, answers the regex execution it
 * stopped (null if it stopped something else). Errors thrown by `fn` propagate.
 */
export function runGuarded<T>(budget: RegexBudget, fn: () => T, timeoutMs: number): Guarded<T> {
  const outerBudget = activeBudget;
  const outerRunning = running;
  activeBudget = budget;
  running = null;
  (context as { run?: () => T }).run = fn;
  try {
    return { completed: true, value: script.runInContext(context, { timeout: Math.max(1, Math.ceil(timeoutMs)) }) as T };
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return { completed: false, running };
    throw error;
  } finally {
    (context as { run?: () => T }).run = undefined;
    activeBudget = outerBudget;
    running = outerRunning;
  }
}
