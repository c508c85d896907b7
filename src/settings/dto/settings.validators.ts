import { ValidateBy, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { parseCalendarDate } from '../../common/calendar-dates.js';

/**
 * "Area/Location" names (each part capitalised, as IANA spells them) or UTC. The pattern keeps out
 * what Intl also accepts but MongoDB's date operators do not: offsets such as "+01:00", odd casing.
 */
const IANA_NAME = /^(?:UTC|[A-Z][A-Za-z0-9_+-]*(?:\/[A-Z][A-Za-z0-9_+-]*)*)$/;

export function isIanaTimeZone(value: unknown): boolean {
  if (typeof value !== 'string' || value.length > 64 || !IANA_NAME.test(value)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

/** A short language tag: a 2-3 letter language with up to two subtags (script, region), e.g. "en", "pt-BR". */
const SHORT_TAG = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8}){0,2}$/;

/** The canonical spelling of a short BCP 47 tag ("pt-br" → "pt-BR"), or null when it is not one. */
export function canonicalLanguage(value: unknown): string | null {
  if (typeof value !== 'string' || !SHORT_TAG.test(value)) return null;
  try {
    return Intl.getCanonicalLocales(value)[0] ?? null;
  } catch {
    return null;
  }
}

export const IsIanaTimeZone = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isIanaTimeZone',
      validator: {
        validate: isIanaTimeZone,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} must be an IANA time zone name such as "Europe/Paris" or "UTC"`,
      },
    },
    options,
  );

export const IsBcp47Language = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isBcp47Language',
      validator: {
        validate: (value: unknown) => canonicalLanguage(value) !== null,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} must be a short BCP 47 language tag such as "en" or "pt-BR"`,
      },
    },
    options,
  );

/** "HH:MM" strings compare correctly as strings. */
export const IsAfterTime = (startProperty: string, options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isAfterTime',
      constraints: [startProperty],
      validator: {
        validate: (value: unknown, args?: ValidationArguments) => {
          const start = (args?.object as Record<string, unknown>)[startProperty];
          return typeof value === 'string' && typeof start === 'string' && value > start;
        },
        defaultMessage: (args?: ValidationArguments) => `${args?.property} must be later than ${startProperty}`,
      },
    },
    options,
  );

interface Window {
  day?: unknown;
  open?: unknown;
  close?: unknown;
}

/** Two windows of one day overlap when each opens before the other closes. */
export function findOverlap(windows: Window[]): [number, number] | null {
  for (let a = 0; a < windows.length; a += 1) {
    for (let b = a + 1; b < windows.length; b += 1) {
      const [x, y] = [windows[a], windows[b]];
      if (x?.day !== y?.day) continue;
      if (String(x.open) < String(y.close) && String(y.open) < String(x.close)) return [a, b];
    }
  }
  return null;
}

export const IsNonOverlappingSchedule = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isNonOverlappingSchedule',
      validator: {
        validate: (value: unknown) => !Array.isArray(value) || findOverlap(value as Window[]) === null,
        defaultMessage: (args?: ValidationArguments) => {
          const [a, b] = findOverlap(args?.value as Window[]) ?? [0, 0];
          return `${args?.property} windows ${a} and ${b} overlap on the same day`;
        },
      },
    },
    options,
  );

/** The index of the first entry that is not a real calendar date written YYYY-MM-DD, or -1. */
function firstBadDate(value: unknown[]): number {
  return value.findIndex((entry) => typeof parseCalendarDate(entry) !== 'number');
}

/** Every entry a real calendar date written YYYY-MM-DD (2026-02-30 is not one). */
export const IsCalendarDateList = (options?: ValidationOptions) =>
  ValidateBy(
    {
      name: 'isCalendarDateList',
      validator: {
        validate: (value: unknown) => !Array.isArray(value) || firstBadDate(value) === -1,
        defaultMessage: (args?: ValidationArguments) => {
          const index = firstBadDate(args?.value as unknown[]);
          const entry = (args?.value as unknown[])[index];
          return `${args?.property}[${index}] must be a real calendar date written YYYY-MM-DD (got ${JSON.stringify(entry)})`;
        },
      },
    },
    options,
  );
