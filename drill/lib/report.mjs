// Small helpers the drills share: bounded concurrency and printing counts.

/** Runs `task(item)` over `items` with at most `inFlight` at once, in order of start. */
export async function forEachConcurrently(items, inFlight, task) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, items.length) }, worker));
}

/** `{ "200": 3, "400": 5 }` as "200: 3, 400: 5", keys in order. */
export function formatCounts(counts) {
  return Object.keys(counts)
    .sort()
    .map((key) => `${key}: ${counts[key]}`)
    .join(', ');
}

export function increment(counts, key) {
  counts[key] = (counts[key] ?? 0) + 1;
}

/** The value below which `fraction` of the sorted numbers fall. */
export function percentile(sorted, fraction) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}
