import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { BoundedMap } from '../common/bounded-map.js';

/** How many numbers normalizePhone remembers (the oldest forgotten first): possible numbers only, so junk cannot push them out. */
const RECENT_NUMBERS = 10_000;
const recent = new BoundedMap<string, string>(RECENT_NUMBERS);

/**
 * A phone number in E.164 ("+" and digits), or null when it is not a possible number. There is no
 * default country: digits without "+" are read as international ("14155552671" is +1 415...), and
 * the ITU "00" prefix counts as "+". "Possible" (a valid length for the country code) rather than
 * "valid" (an assigned range), so fictional test numbers such as +1 555 0100 are accepted. An
 * extension is refused rather than silently dropped.
 */
export function normalizePhone(raw: string): string | null {
  const known = recent.get(raw);
  if (known !== undefined) return known;
  const normalized = parse(raw);
  // Channels send the same numbers again and again; parsing one costs more than the rest of its lookup.
  if (normalized !== null) recent.set(raw, normalized);
  return normalized;
}

function parse(raw: string): string | null {
  const trimmed = raw.trim();
  const international = trimmed.startsWith('+') ? trimmed : `+${trimmed.replace(/^00/, '')}`;
  const parsed = parsePhoneNumberFromString(international);
  if (!parsed || !parsed.isPossible() || parsed.ext) return null;
  return parsed.number;
}
