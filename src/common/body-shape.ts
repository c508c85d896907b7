import { BadRequestException, UnsupportedMediaTypeException } from '@nestjs/common';

/**
 * The most fields and array items a request body may hold, all levels counted (contract section 18). Far
 * more than any request of the API needs (a flow with 50 keywords and its steps holds a few hundred), few
 * enough that validating the body costs a few milliseconds: class-transformer and class-validator cost
 * more than linearly in the number of keys (10 000 unknown keys took 0.24 s of CPU, 90 000 took 4.5 s).
 */
export const MAX_BODY_KEYS = 1000;

/** The deepest a body's objects and arrays may nest, the body itself being the first level. */
export const MAX_BODY_DEPTH = 20;

export const TOO_MANY_KEYS = `The request body holds more than ${MAX_BODY_KEYS} fields and array items in all; send at most ${MAX_BODY_KEYS}`;
export const TOO_DEEP = `The request body nests objects and arrays more than ${MAX_BODY_DEPTH} levels deep; send at most ${MAX_BODY_DEPTH}`;

/**
 * Why a parsed body is refused, or null: for what the JSON parser did not see (multipart form fields, which a
 * file interceptor parses after the guards; see RejectOperatorKeysPipe). Walks at most
 * MAX_BODY_KEYS entries and MAX_BODY_DEPTH levels, without recursion: its cost is bounded whatever the body
 * (an array's items are counted by its length, so a sparse array of a billion holes costs nothing either).
 */
export function bodyShapeProblem(body: unknown): string | null {
  if (body === null || typeof body !== 'object') return null;
  const pending: Array<{ node: object; depth: number }> = [{ node: body, depth: 1 }];
  let entries = 0;
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node, depth } = next;
    const values: unknown[] = [];
    if (Array.isArray(node)) {
      entries += node.length;
      if (entries > MAX_BODY_KEYS) return TOO_MANY_KEYS;
      values.push(...(node as unknown[]));
    } else {
      for (const key in node) {
        entries += 1;
        if (entries > MAX_BODY_KEYS) return TOO_MANY_KEYS;
        values.push((node as Record<string, unknown>)[key]);
      }
    }
    for (const value of values) {
      if (value === null || typeof value !== 'object') continue;
      if (depth + 1 > MAX_BODY_DEPTH) return TOO_DEEP;
      pending.push({ node: value, depth: depth + 1 });
    }
  }
  return null;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index of the quote that closes the string opening at `start`, or the text's length if none does. */
function endOfString(text: Buffer, start: number): number {
  for (let at = text.indexOf(QUOTE, start + 1); at !== -1; at = text.indexOf(QUOTE, at + 1)) {
    let backslashes = 0;
    while (at - backslashes - 1 > start && text[at - backslashes - 1] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
  return text.length;
}

/**
 * bodyShapeProblem for a JSON text, read without parsing it: JSON.parse alone took 120 ms of CPU for a body of
 * 90 000 keys. One pass over the bytes, counting an object's members at their colons and an array's items
 * at its first value and its commas, strings skipped whole (each quote found with indexOf, each backslash
 * looked at once). It counts what the text says: a key repeated in an object counts twice. A malformed text
 * may be counted wrong; JSON.parse refuses it next anyway.
 */
export function jsonShapeProblem(text: Buffer): string | null {
  /** Whether each open container is an array, by depth (the body's own container is depth 1). */
  const isArray: boolean[] = [false];
  let depth = 0;
  let entries = 0;
  /** Just after a `[`: the next value, unless it is `]`, is the array's first item. */
  let awaitingFirstItem = false;
  for (let index = 0; index < text.length; index += 1) {
    const byte = text[index];
    // White space: space, tab, line feed, carriage return.
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    if (awaitingFirstItem) {
      awaitingFirstItem = false;
      if (byte !== 0x5d && ++entries > MAX_BODY_KEYS) return TOO_MANY_KEYS;
    }
    switch (byte) {
      case QUOTE:
        index = endOfString(text, index);
        break;
      case 0x7b: // {
      case 0x5b: // [
        if (++depth > MAX_BODY_DEPTH) return TOO_DEEP;
        isArray[depth] = byte === 0x5b;
        awaitingFirstItem = byte === 0x5b;
        break;
      case 0x7d: // }
      case 0x5d: // ]
        depth = Math.max(0, depth - 1);
        break;
      case 0x3a: // : after a member's name
        if (!isArray[depth] && ++entries > MAX_BODY_KEYS) return TOO_MANY_KEYS;
        break;
      case 0x2c: // , before an array's next item
        if (isArray[depth] && ++entries > MAX_BODY_KEYS) return TOO_MANY_KEYS;
        break;
    }
  }
  return null;
}

/**
 * The JSON body parser's `verify` step: it runs on the received bytes before JSON.parse, so a body with too
 * many keys or nested too deep answers 400 before it is parsed, and before any guard or pipe reads it (the
 * idempotency fingerprint, class-transformer), on every route, public or not, whatever it would have matched.
 * JSON must be UTF-8 (RFC 8259): other charsets the parser would take (UTF-16, UTF-32) answer 415, so that
 * this byte-wise count is the body's.
 */
export function verifyJsonBody(_req: unknown, _res: unknown, body: Buffer, encoding: string | null): void {
  if (encoding !== null && encoding !== 'utf-8') {
    throw new UnsupportedMediaTypeException(`JSON bodies must be UTF-8, not ${encoding.slice(0, 40)}`);
  }
  const problem = jsonShapeProblem(body);
  if (problem !== null) throw new BadRequestException(problem);
}
