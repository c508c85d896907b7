/** A small client of the app's API for seeding and set-up (not for the measured load). */
export class Api {
  constructor(base) {
    this.base = base;
  }

  /** Answers the parsed JSON body and the raw text; throws on a non-2xx status. */
  async call(method, path, { token, apiKey, body } = {}) {
    const headers = { 'content-type': 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (apiKey) headers['x-api-key'] = apiKey;
    const response = await fetch(this.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return { json: text ? JSON.parse(text) : null, text };
  }

  async json(method, path, options) {
    return (await this.call(method, path, options)).json;
  }
}

/**
 * Runs `task(item)` for every item of `items`, with at most `inFlight` at once, in order of start. `items` is a
 * list, or a count n for the indices 0..n-1 (the benchmark's seeding and fan-out).
 */
export async function forEachConcurrently(items, inFlight, task) {
  const count = typeof items === 'number' ? items : items.length;
  const item = typeof items === 'number' ? (i) => i : (i) => items[i];
  let next = 0;
  const worker = async () => {
    while (next < count) await task(item(next++));
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, worker));
}
