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

/** Runs `task(i)` for i in [0, count) with at most `concurrency` at once. */
export async function forEachConcurrently(count, concurrency, task) {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}
