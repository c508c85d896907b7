// The rate-limit passes, each on API processes of their own on the drill's engine: past each limit both interfaces
// answer clean 429s (Retry-After, the rate-limit headers, their interface's error shape).
// 1. The default limit per agent and per API key (one process, 350 requests each).
// 2. Failed authentications per address (TRUST_PROXY=loopback, so X-Forwarded-For names the client): bad bearer
//    tokens, bad API keys, wrong passwords, each from its own address, then a good token from a failed address.
// 3. Route weights: analytics metrics counts 10.
// 4. Two processes on one database: one per-agent limit between them within the stated bound, and the company
//    ceiling holding an API key of the same company.
import { forEachConcurrently } from '../../harness/api.mjs';
import { freePort } from '../../harness/children.mjs';
import { apiClient } from '../lib/client.mjs';
import { createApiKey, registerCompany } from '../lib/fixtures.mjs';
import { increment } from '../lib/report.mjs';
import { startApi } from '../lib/processes.mjs';

const DEFAULT_LIMIT = 300;
const DEFAULT_AUTH_FAILURE_LIMIT = 20;
const REQUESTS_PER_CALLER = DEFAULT_LIMIT + 50;
const IN_FLIGHT = 20;
const RATE_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];
/** The shared pass: a sync at most every SYNC_MS while requests arrive. */
const SYNC_MS = 100;
const COMPANY_LIMIT = 450;
/**
 * Windows are aligned on the clock: an hour's window keeps each pass (a few seconds) inside one window, where a
 * minute's would split one now and then and count part of it from zero.
 */
const WINDOW_MS = 3_600_000;
/** Generous for a loaded machine: the sync round trip on top of the interval. */
const ROUND_TRIP_ALLOWANCE_MS = 100;
/**
 * The passes' processes trust the drill as their proxy, so that each company registers from an address of its own:
 * the drill's own address has spent its anonymous limit on the main run (counts are shared through the database).
 */
const PROXIED = { TRUST_PROXY: 'loopback', THROTTLE_TTL_MS: String(WINDOW_MS) };
let addresses = 0;
const newAddress = () => ({ 'x-forwarded-for': `203.0.113.${(addresses += 1)}` });

function problemsOf429(path, response, policy) {
  const problems = [];
  if (!response.headers['retry-after']) problems.push('no Retry-After');
  const missing = RATE_HEADERS.filter((header) => !response.headers[header]);
  if (missing.length) problems.push(`missing ${missing.join(', ')}`);
  if (policy && !String(response.headers['ratelimit-policy']).startsWith(`"${policy}"`)) problems.push(`policy ${response.headers['ratelimit-policy']}, not ${policy}`);
  const external = path.startsWith('/api/external');
  const shaped = external
    ? response.json?.success === false && typeof response.json.error === 'string'
    : String(response.headers['content-type']).startsWith('application/problem+json') && response.json?.statusCode === 429;
  if (!shaped) problems.push(external ? 'not the error envelope' : 'not problem+json');
  return problems;
}

/** Sends `calls` ([path, options]) with IN_FLIGHT in flight; counts statuses and checks every 429. */
async function sendAll(client, calls, { statuses, violations, policy, method = 'GET' }) {
  const limited = new Set();
  const admitted = new Map();
  await forEachConcurrently(calls, IN_FLIGHT, async ([path, options]) => {
    const response = await client.call(method, path, options);
    increment(statuses, response.status);
    if (response.status >= 500) violations.push(`${method} ${path}: ${response.status}`);
    if (response.status < 300) admitted.set(path, (admitted.get(path) ?? 0) + 1);
    if (response.status !== 429) return;
    limited.add(path);
    for (const problem of problemsOf429(path, response, policy)) violations.push(`${method} ${path}: 429 ${problem}`);
  });
  return { limited, admitted };
}

async function defaultLimitPass(client, result) {
  const company = await registerCompany(client, 'Limited', newAddress());
  const { key } = await createApiKey(client, company, ['webhooks:manage']);
  const calls = [
    ...Array.from({ length: REQUESTS_PER_CALLER }, () => ['/v1/conversations', { token: company.token }]),
    ...Array.from({ length: REQUESTS_PER_CALLER }, () => ['/api/external/webhooks', { apiKey: key }]),
  ];
  const { limited } = await sendAll(client, calls, { statuses: result.statuses.default, violations: result.violations, policy: 'default' });
  for (const [path] of new Map(calls)) if (!limited.has(path)) result.violations.push(`GET ${path}: never limited after ${REQUESTS_PER_CALLER} requests`);
}

/** Sends `count` requests one at a time from `address`; answers their statuses, checking the 429s. */
async function failFrom(client, count, method, path, options, result) {
  const seen = [];
  for (let i = 0; i < count; i++) {
    const response = await client.call(method, path, options(i));
    increment(result.statuses.authFailures, response.status);
    seen.push(response.status);
    if (response.status === 429) for (const problem of problemsOf429(path, response, 'auth-failures')) result.violations.push(`${method} ${path}: 429 ${problem}`);
  }
  return seen;
}

async function authFailurePass(client, fresh, result) {
  const address = (n) => ({ 'x-forwarded-for': `198.51.100.${n}` });
  const expected = (count) => [...Array(DEFAULT_AUTH_FAILURE_LIMIT).fill(401), ...Array(count - DEFAULT_AUTH_FAILURE_LIMIT).fill(429)].join(',');
  const runs = [
    ['bad bearer tokens', 'GET', '/v1/conversations', () => ({ token: 'forged.token.value', headers: address(1) })],
    ['bad API keys', 'GET', '/api/external/webhooks', (i) => ({ apiKey: `pk_guess_${i}`, headers: address(2) })],
    ['wrong passwords', 'POST', '/v1/auth/login', () => ({ json: { email: fresh.email, password: 'not the password' }, headers: address(3) })],
  ];
  for (const [label, method, path, options] of runs) {
    const seen = await failFrom(client, 2 * DEFAULT_AUTH_FAILURE_LIMIT, method, path, options, result);
    if (seen.join(',') !== expected(seen.length)) result.violations.push(`${label}: expected ${DEFAULT_AUTH_FAILURE_LIMIT} × 401 then 429, got ${seen.join(',')}`);
  }
  const good = await client.call('GET', '/v1/conversations', { token: fresh.token, headers: address(1) });
  if (good.status !== 429) result.violations.push(`a good token from an address over the failure limit answered ${good.status}, not 429`);
  const elsewhere = await client.call('GET', '/v1/conversations', { token: fresh.token, headers: address(4) });
  if (elsewhere.status !== 200) result.violations.push(`a good token from a clean address answered ${elsewhere.status}`);
}

async function weightPass(client, fresh, result) {
  const remaining = [];
  for (let i = 0; i < 3; i++) {
    const response = await client.call('GET', '/v1/analytics/metrics?startDate=2025-01-01&endDate=2025-01-31', { token: fresh.token });
    increment(result.statuses.weights, response.status);
    remaining.push(Number(response.headers['x-ratelimit-remaining']));
  }
  const steps = remaining.slice(1).map((value, index) => remaining[index] - value);
  if (!steps.every((step) => step === 10)) result.violations.push(`analytics metrics should count 10 each: remaining went ${remaining.join(', ')}`);
}

/** Two API processes on one database, the agent's requests spread over both; then an API key of the same company. */
async function sharedPass(mongodbUri, result) {
  const env = { ...PROXIED, THROTTLE_LIMIT: String(DEFAULT_LIMIT), THROTTLE_COMPANY_LIMIT: String(COMPANY_LIMIT), THROTTLE_SYNC_MS: String(SYNC_MS) };
  const apis = [];
  const clients = [];
  try {
    for (let i = 0; i < 2; i++) {
      apis.push(await startApi({ port: await freePort(), mongodbUri, env }));
      clients.push(apiClient(apis[i].baseUrl, { connections: IN_FLIGHT }));
    }
    const company = await registerCompany(clients[0], 'Shared', newAddress());
    const key = await createApiKey(clients[0], company, ['webhooks:manage']);
    const calls = Array.from({ length: 2 * DEFAULT_LIMIT }, (_, i) => i);
    const admitted = [0, 0];
    const lastAdmittedAt = [0, 0];
    const started = Date.now();
    await forEachConcurrently(calls, IN_FLIGHT, async (i) => {
      const response = await clients[i % 2].call('GET', '/v1/agents', { token: company.token });
      increment(result.statuses.shared, response.status);
      if (response.status === 200) {
        admitted[i % 2] += 1;
        lastAdmittedAt[i % 2] = Date.now();
      } else if (response.status !== 429) result.violations.push(`shared pass: GET /v1/agents answered ${response.status}`);
    });
    const seconds = (Date.now() - started) / 1000;
    // A process is blind to what the other admitted since the other's last flush before this one's last read: at
    // most what the other admits in two intervals and a round trip, at the rate it admitted while it was admitting.
    const rates = admitted.map((count, index) => count / Math.max(0.001, (lastAdmittedAt[index] - started) / 1000));
    const bound = DEFAULT_LIMIT + Math.ceil(Math.max(...rates) * ((2 * SYNC_MS + ROUND_TRIP_ALLOWANCE_MS) / 1000));
    const total = admitted[0] + admitted[1];
    result.shared = { admitted, total, bound, seconds };
    if (total < DEFAULT_LIMIT || total > bound) result.violations.push(`shared pass: ${total} admitted by two processes, outside [${DEFAULT_LIMIT}, ${bound}]`);

    // The company has spent ~300 (plus the key's creation): its key, with a limit of its own of 300, gets only what the ceiling leaves.
    await new Promise((resolve) => setTimeout(resolve, 2 * SYNC_MS));
    const keyCalls = Array.from({ length: DEFAULT_LIMIT }, (_, i) => [clients[i % 2], i]);
    let keyAdmitted = 0;
    let ceilingSeen = false;
    await forEachConcurrently(keyCalls, IN_FLIGHT, async ([client]) => {
      const response = await client.call('GET', '/api/external/webhooks', { apiKey: key.key });
      increment(result.statuses.shared, response.status);
      if (response.status === 200) keyAdmitted += 1;
      if (response.status === 429 && /for this company/.test(response.json?.error ?? '')) ceilingSeen = true;
    });
    result.shared.keyAdmitted = keyAdmitted;
    if (!ceilingSeen || keyAdmitted >= DEFAULT_LIMIT) result.violations.push(`company ceiling: the key got ${keyAdmitted} of ${DEFAULT_LIMIT} with the company near its ${COMPANY_LIMIT}`);
  } finally {
    for (const client of clients) await client.close();
    for (const api of apis) await api.stop();
  }
}

/**
 * Answers `{ statuses: { default, authFailures, weights, shared }, shared, violations }`. Each pass counts companies
 * made for it: the counts are shared through the database, so the ones of the drill's own companies (spent on the
 * drill's main process, whose limit is out of reach) would count here too.
 */
export async function rateLimitPass(mongodbUri) {
  const result = { statuses: { default: {}, authFailures: {}, weights: {}, shared: {} }, violations: [] };
  const api = await startApi({
    port: await freePort(),
    mongodbUri,
    env: { ...PROXIED, THROTTLE_LIMIT: String(DEFAULT_LIMIT), AUTH_FAILURE_LIMIT: String(DEFAULT_AUTH_FAILURE_LIMIT) },
  });
  const client = apiClient(api.baseUrl, { connections: IN_FLIGHT });
  try {
    await defaultLimitPass(client, result);
    const fresh = await registerCompany(client, 'Failing', newAddress());
    await authFailurePass(client, fresh, result);
    await weightPass(client, fresh, result);
  } finally {
    await client.close();
    await api.stop();
  }
  await sharedPass(mongodbUri, result);
  return { ...result, violations: [...new Set(result.violations)] };
}

