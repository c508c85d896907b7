// Small helpers the drills share: counting and printing counts.

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
