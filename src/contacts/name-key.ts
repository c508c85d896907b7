/**
 * The key under which two names count as the same person's (duplicate candidates, contract section 22): letters
 * without their accents, lower-cased, with every space removed; undefined for a name that leaves nothing.
 */
export function nameKeyOf(name: string | null | undefined): string | undefined {
  const key = (name ?? '').normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/gu, '');
  return key || undefined;
}
