/** The p-th percentile (0..100) of numbers, nearest rank. */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const median = (values) => percentile(values, 50);

/** Latencies in milliseconds, appended at full speed while load runs. */
export class LatencyRecorder {
  constructor() {
    this.values = new Float64Array(1 << 16);
    this.length = 0;
  }

  add(ms) {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = ms;
  }

  percentile(p) {
    return percentile(this.values.subarray(0, this.length), p);
  }
}
