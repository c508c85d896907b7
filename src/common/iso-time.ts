const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * `date.toISOString()`, built from the date's UTC fields: V8's own formatting costs 2-3 times as much (~0.65 µs
 * against ~0.26 on Node.js 20), and a page of 50 conversations formats 400 times. Years outside 0..9999, which
 * toISOString writes with a sign and six digits, are left to it.
 */
export function isoTime(date: Date): string {
  const year = date.getUTCFullYear();
  if (!(year >= 0 && year <= 9999)) return date.toISOString();
  const y = year < 1000 ? `${year}`.padStart(4, '0') : `${year}`;
  return `${y}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}T${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}.${pad3(date.getUTCMilliseconds())}Z`;
}
