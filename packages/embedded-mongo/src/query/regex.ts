/**
 * `{ $regex: 'pattern', $options: 'imsx' }` as MongoDB reads it: one RegExp with those flags (filters.ts puts it in
 * place of the pair).
 */
import { badValue, MongoCommandError } from '../errors.js';

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
