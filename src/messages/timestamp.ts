import { ValidateBy, type ValidationOptions } from 'class-validator';

/** What a timestamp query parameter takes, as its documentation says it. */
export const TIMESTAMP_FORMAT = 'ISO-8601 with a zone (`2024-05-01T10:00:00Z`), a date (`2024-05-01`, midnight UTC) or epoch milliseconds';

const EPOCH_MILLIS = /^\d{1,16}$/;
/** A date, optionally with a time that then must say its offset: a time without a zone would mean the server's. */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;
const MAX_TIME = 8.64e15;

/**
 * Reads a timestamp query value: epoch milliseconds ("1714557600000") or ISO-8601
 * ("2024-05-01T10:00:00Z", "2024-05-01T12:00:00.250+02:00", "2024-05-01" = midnight UTC).
 * Null for anything else, impossible calendar dates (2024-02-30) included.
 */
export function parseTimestamp(value: string): Date | null {
  if (EPOCH_MILLIS.test(value)) {
    const millis = Number(value);
    return millis <= MAX_TIME ? new Date(millis) : null;
  }
  const match = ISO_8601.exec(value);
  if (!match) return null;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return null;
  const [, year, month, day] = match.map(Number);
  // Date rolls 2024-02-30 over into March; the calendar date must exist as written.
  const calendar = new Date(Date.UTC(year, month - 1, day));
  return calendar.getUTCFullYear() === year && calendar.getUTCMonth() === month - 1 && calendar.getUTCDate() === day
    ? date
    : null;
}

export const IsTimestamp = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isTimestamp',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && parseTimestamp(value) !== null,
        defaultMessage: (args) => `${args?.property} must be an ISO-8601 time with a zone (or a date), or epoch milliseconds`,
      },
    },
    options,
  );
