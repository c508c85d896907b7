import { setFlagsFromString } from 'node:v8';

/**
 * Caps how far V8 lets the old generation grow past what its last full collection kept: to
 * (1 + percent/100) times it. Left to itself, V8 grows it up to 4 times under load, so objects that
 * outlive a few young-generation collections (the state of requests waiting for the database) pile up
 * as garbage that a process idle after the load still holds. V8 reads the factor at every collection,
 * so setting it once the process runs takes effect from the next one. 0 leaves V8's own policy.
 */
export function applyHeapGrowth(percent: number, setFlags: (flags: string) => void = setFlagsFromString): void {
  if (percent > 0) setFlags(`--heap-growing-percent=${percent}`);
}
