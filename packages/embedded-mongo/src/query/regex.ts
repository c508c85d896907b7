/**
 * `{ $regex: 'pattern', $options: 'imsx' }` as MongoDB reads it: one RegExp with those flags (filters.ts puts it in
 * place of the pair).
 */
import { evalExpr } from 'mingo/core';
import type * as expressionOperators from 'mingo/operators/expression';
import { badValue, MongoCommandError } from '../errors.js';
import { GuardedRegExp } from './guard.js';

type ExpressionOp = typeof expressionOperators.$regexMatch;

const OPTION_FLAGS: Record<string, string> = { i: 'i', m: 'm', s: 's', x: '', u: '' };

/** PCRE's extended mode: unescaped whitespace and `#` comments outside character classes are ignored. */
function stripExtended(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      out += c + (pattern[i + 1] ?? '');
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (c === '#') {
      while (i < pattern.length && pattern[i] !== '\n') i++;
    } else if (!/\s/.test(c)) out += c;
  }
  return out;
}

export function regexWithOptions(source: unknown, options: unknown): RegExp {
  if (options !== undefined && typeof options !== 'string') throw badValue('$options has to be a string');
  let pattern: string;
  let flags = '';
  if (source instanceof RegExp) {
    if (options && source.flags) throw new MongoCommandError(51075, 'options set on both $regex and $options');
    pattern = source.source;
    flags = source.flags;
  } else if ((source as { _bsontype?: string })?._bsontype === 'BSONRegExp') {
    const r = source as { pattern: string; options: string };
    if (options && r.options) throw new MongoCommandError(51075, 'options set on both $regex and $options');
    pattern = r.pattern;
    options = r.options;
  } else if (typeof source === 'string') {
    pattern = source;
  } else {
    throw badValue('$regex has to be a string');
  }
  for (const o of (options as string | undefined) ?? '') {
    if (!(o in OPTION_FLAGS)) throw new MongoCommandError(51108, `invalid flag in regex options: ${o}`);
    if (o === 'x') pattern = stripExtended(pattern);
    else if (!flags.includes(OPTION_FLAGS[o])) flags += OPTION_FLAGS[o];
  }
  try {
    return new RegExp(pattern, flags);
  } catch (err) {
    throw new MongoCommandError(51091, `Regular expression is invalid: ${(err as Error).message}`);
  }
}

type RegexOperator = '$regexMatch' | '$regexFind' | '$regexFindAll';
const REGEX_ARGUMENTS = new Set(['input', 'regex', 'options']);

/** The index of a UTF-16 position in code points, as MongoDB reports `idx`. */
function codePointIndex(s: string, unit: number): number {
  let n = 0;
  for (let i = 0; i < unit; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < unit) i++;
  }
  return n;
}

/**
 * `$regexMatch`, `$regexFind` and `$regexFindAll` with a GuardedRegExp (an execution past the command's budget fails
 * it with 51156, as PCRE2's match limit does in MongoDB), MongoDB's options (`x` too) and arguments checks, matches
 * found from a start offset as PCRE does (so `^` anchors at the start only), empty matches stepped over, `idx` in code
 * points and unmatched groups as null.
 */
function regexExpression(op: RegexOperator): ExpressionOp {
  return (obj, expr, evalOptions) => {
    if (expr === null || typeof expr !== 'object' || Array.isArray(expr)) throw new MongoCommandError(51103, `${op} expects an object of named arguments but found: ${typeof expr}`);
    for (const k of Object.keys(expr)) if (!REGEX_ARGUMENTS.has(k)) throw new MongoCommandError(31024, `${op} found an unknown argument: ${k}`);
    if (!('input' in expr)) throw new MongoCommandError(31022, `${op} requires 'input' parameter`);
    if (!('regex' in expr)) throw new MongoCommandError(31023, `${op} requires 'regex' parameter`);
    const args = evalExpr(obj, expr, evalOptions) as { input?: unknown; regex?: unknown; options?: unknown };
    const none = op === '$regexMatch' ? false : op === '$regexFind' ? null : [];
    if (args.input === null || args.input === undefined) return none;
    if (typeof args.input !== 'string') throw new MongoCommandError(51104, `${op} needs 'input' to be of type string`);
    if (args.regex === null || args.regex === undefined) return none;
    const options = args.options === null ? undefined : args.options;
    const base = regexWithOptions(args.regex, options);
    const re = new GuardedRegExp(base.source, `${base.flags}g`);
    re.operator = op;
    const input = args.input;
    const found: { match: string; idx: number; captures: (string | null)[] }[] = [];
    for (let m = re.exec(input); m; m = re.exec(input)) {
      found.push({ match: m[0], idx: codePointIndex(input, m.index), captures: m.slice(1).map((c) => c ?? null) });
      if (op !== '$regexFindAll') break;
      if (m[0] === '') re.lastIndex += input.codePointAt(re.lastIndex)! > 0xffff ? 2 : 1;
    }
    if (op === '$regexMatch') return found.length > 0;
    return op === '$regexFind' ? (found[0] ?? null) : found;
  };
}

/** The regex expressions of the engine's mingo context. */
export const regexExpressions = {
  $regexMatch: regexExpression('$regexMatch'),
  $regexFind: regexExpression('$regexFind'),
  $regexFindAll: regexExpression('$regexFindAll'),
};
