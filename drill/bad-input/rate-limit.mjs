// One pass at the default rate limit, on an API process of its own: past the limit, both interfaces answer clean 429s.
import { forEachConcurrently } from '../../harness/api.mjs';
import { freePort } from '../../harness/children.mjs';
import { apiClient } from '../lib/client.mjs';
import { increment } from '../lib/report.mjs';
import { startApi } from '../lib/processes.mjs';

const DEFAULT_LIMIT = 300;
const REQUESTS_PER_CALLER = DEFAULT_LIMIT + 50;
const IN_FLIGHT = 20;
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

function problemsOf429(path, response) {
  const problems = [];
  if (!response.headers['retry-after']) problems.push('no Retry-After');
  const missing = RATE_HEADERS.filter((header) => !response.headers[header]);
  if (missing.length) problems.push(`missing ${missing.join(', ')}`);
  const external = path.startsWith('/api/external');
  const shaped = external
    ? response.json?.success === false && typeof response.json.error === 'string'
    : String(response.headers['content-type']).startsWith('application/problem+json') && response.json?.statusCode === 429;
  if (!shaped) problems.push(external ? 'not the error envelope' : 'not problem+json');
  return problems;
}

/** Answers `{ statuses, violations }`; `a` is the company (token and API key) whose requests are counted. */
export async function rateLimitPass(mongodbUri, a) {
  const api = await startApi({ port: await freePort(), mongodbUri, env: { THROTTLE_LIMIT: String(DEFAULT_LIMIT) } });
  const client = apiClient(api.baseUrl, { connections: IN_FLIGHT });
  const calls = [
    ...Array.from({ length: REQUESTS_PER_CALLER }, () => ['/v1/conversations', { token: a.token }]),
    ...Array.from({ length: REQUESTS_PER_CALLER }, () => ['/api/external/webhooks', { apiKey: a.apiKey }]),
  ];
  const statuses = {};
  const violations = [];
  const limited = new Set();
  try {
    await forEachConcurrently(calls, IN_FLIGHT, async ([path, credentials]) => {
      const response = await client.call('GET', path, credentials);
      increment(statuses, response.status);
      if (response.status >= 500) violations.push(`GET ${path}: ${response.status}`);
      if (response.status !== 429) return;
      limited.add(path);
      for (const problem of problemsOf429(path, response)) violations.push(`GET ${path}: 429 ${problem}`);
    });
    for (const [path] of new Map(calls)) if (!limited.has(path)) violations.push(`GET ${path}: never limited after ${REQUESTS_PER_CALLER} requests`);
  } finally {
    await client.close();
    await api.stop();
  }
  return { statuses, violations: [...new Set(violations)] };
}
