import type { FieldProblem } from './request-validation.exception.js';

/** The most an error body may weigh (contract section 18), whatever the request made it say. */
export const MAX_ERROR_BODY_BYTES = 10 * 1024;

/** The most field problems an error body lists; it says how many more there were. */
export const MAX_LISTED_PROBLEMS = 20;

/**
 * What one message or field name may take in a body, JSON-encoded. Messages quote what the caller sent (an
 * unknown key, a refused field name), which may be a megabyte long.
 */
const MAX_MESSAGE_BYTES = 300;
const MAX_FIELD_BYTES = 100;
/** A single message (not a list) gets more room: it is the whole of the error. */
const MAX_SOLE_MESSAGE_BYTES = 1000;

/**
 * The room in the body for everything but the problems: the fixed fields of problem details (type, title,
 * status, instance, statusCode, error, requestId, all bounded) and the punctuation.
 */
const FIXED_BYTES = 1024;
/** The line saying how many problems were left out, in `detail` and in `message`. */
const SUMMARY_BYTES = 2 * 64;

/**
 * Bytes `code` (one UTF-16 unit) may take in a JSON string, as UTF-8: an escape for control characters, `"`
 * and `\`; a surrogate counted as if JSON.stringify escaped it alone (`\udXXX`), which over-counts a pair.
 */
function encodedBytes(code: number): number {
  if (code < 0x20) return 6;
  if (code === 0x22 || code === 0x5c) return 2;
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code >= 0xd800 && code <= 0xdfff) return 6;
  return 3;
}

/** `text`, cut with an ellipsis so that it takes at most `maxBytes` in a JSON body. */
export function clipForBody(text: string, maxBytes: number): string {
  // Fast path: even all escapes would fit.
  if (text.length * 6 <= maxBytes) return text;
  const room = maxBytes - 3; // the ellipsis
  let used = 0;
  let fits = 0;
  for (let index = 0; index < text.length; index += 1) {
    used += encodedBytes(text.charCodeAt(index));
    if (used > maxBytes) {
      // Never between the two halves of a surrogate pair.
      const last = text.charCodeAt(fits - 1);
      if (fits > 0 && last >= 0xd800 && last <= 0xdbff) fits -= 1;
      return `${text.slice(0, fits)}…`;
    }
    if (used <= room) fits = index + 1;
  }
  return text;
}

/** What a bounded error carries: its message(s) and, for a 400 of validation, its field problems. */
export interface ErrorWords {
  message: string | string[];
  errors?: FieldProblem[];
  /** Problems found beyond those listed, already left out (RequestValidationException). */
  unlisted?: number;
}

const jsonBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text));

/**
 * The message(s) and field problems of an error, bounded so that its body (problem details repeat each
 * message in `detail`, `message` and `errors`; the envelope joins them) stays under MAX_ERROR_BODY_BYTES:
 * each message and field name clipped, at most MAX_LISTED_PROBLEMS listed, fewer when long ones would not
 * fit, and a last message saying how many were left out.
 */
export function boundErrorWords({ message, errors, unlisted = 0 }: ErrorWords): Omit<ErrorWords, 'unlisted'> {
  if (!Array.isArray(message)) return { message: clipForBody(message, MAX_SOLE_MESSAGE_BYTES), errors };
  const total = Math.max(message.length, errors?.length ?? 0) + unlisted;
  // Only what may be listed is clipped: the rest is counted, not read.
  const messages = message.slice(0, MAX_LISTED_PROBLEMS).map((text) => clipForBody(text, MAX_MESSAGE_BYTES));
  const problems = errors
    ?.slice(0, MAX_LISTED_PROBLEMS)
    .map((problem) => ({ field: clipForBody(problem.field, MAX_FIELD_BYTES), message: clipForBody(problem.message, MAX_MESSAGE_BYTES) }));
  const cost = (count: number): number => {
    let bytes = FIXED_BYTES + SUMMARY_BYTES;
    for (let index = 0; index < count; index += 1) {
      bytes += 3 * (jsonBytes(messages[index] ?? '') + 2);
      const problem = problems?.[index];
      if (problem) bytes += jsonBytes(problem.field) + jsonBytes(problem.message) + 24;
    }
    return bytes;
  };
  let listed = Math.min(total, messages.length);
  while (listed > 0 && cost(listed) > MAX_ERROR_BODY_BYTES) listed -= 1;
  const kept = messages.slice(0, listed);
  if (total > listed) kept.push(`and ${total - listed} more problem${total - listed === 1 ? '' : 's'}, not listed`);
  return { message: kept, errors: problems?.slice(0, listed) };
}
