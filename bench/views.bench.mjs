// Benchmark of saved views (a script, not a test): npm run bench:views [-- options]
// Starts the built app on CPU 0 (the embedded engine in its own process, also on CPU 0, or MONGODB_URI), seeds a
// company with --small conversations and one with --conversations (written in bulk, each with a `tier` attribute:
// gold, silver or bronze), saves in each the view (tier = gold, status queued or human, sort lastActivity),
// and in the large one 20 views, then measures from CPU 1 with autocannon, in --rounds interleaved rounds:
// 1. the view's page (GET /v1/views/:id/results?limit=50) at the small and the large size: large <= 1.5 x small;
// 2. the view's page against the conversations page at the large size: >= 0.7 of its req/s;
// 3. GET /v1/views/counts (20 views) against the conversations page, p50 at the large size: <= 2 x.
// Prints the figures and PASS/MISS per target, with the machine's load. The run holds /tmp/parley-load.lock (flock).
// Options: --rounds 3 --duration 10 --connections 50 --conversations 100000 --small 1000
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rerunPinnedUnderLock } from '../harness/pinning.mjs';

rerunPinnedUnderLock(fileURLToPath(import.meta.url));

const { Api } = await import('../harness/api.mjs');
const { startApp } = await import('./lib/app.mjs');
const { loadRun } = await import('./lib/load.mjs');
const { describeMachine, foreignLoad } = await import('./lib/machine.mjs');
const { connect, registerCompany, seedInBulk } = await import('./lib/seed.mjs');

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    conversations: { type: 'string', default: '100000' },
    small: { type: 'string', default: '1000' },
  },
});
const rounds = Number(options.rounds);
const duration = Number(options.duration);
const connections = Number(options.connections);
const TIERS = ['gold', 'silver', 'bronze'];
const VIEW_FILTER = {
  and: [
    { field: 'attributes.tier', op: 'eq', value: 'gold' },
    { field: 'status', op: 'in', value: ['queued', 'human'] },
  ],
};
/** The 20 views counted: the view and 19 others over attributes and core fields. */
const COUNTED_FILTERS = [
  VIEW_FILTER,
  ...TIERS.map((tier) => ({ field: 'attributes.tier', op: 'eq', value: tier })),
  ...['bot', 'queued', 'human', 'closed'].map((status) => ({ field: 'status', op: 'eq', value: status })),
  ...TIERS.flatMap((tier) =>
    ['queued', 'human'].map((status) => ({
      and: [
        { field: 'attributes.tier', op: 'eq', value: tier },
        { field: 'status', op: 'eq', value: status },
      ],
    })),
  ),
  { field: 'priority', op: 'eq', value: 'high' },
  { field: 'tags', op: 'eq', value: 'billing' },
  { field: 'attributes.tier', op: 'in', value: ['gold', 'silver'] },
  {
    and: [
      { field: 'priority', op: 'eq', value: 'high' },
      { field: 'attributes.tier', op: 'eq', value: 'gold' },
    ],
  },
  { field: 'channel', op: 'eq', value: 'whatsapp' },
  { field: 'createdAt', op: 'withinLast', value: '30d' },
];

const log = (line) => process.stderr.write(`[bench:views ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const machine = describeMachine();
const { app, engine, base, databaseUri } = await startApp({ engineProcess: true });
try {
  const api = new Api(base);
  const { client, db } = await connect(databaseUri);
  const companies = {};
  try {
    for (const [name, size] of [
      ['small', Number(options.small)],
      ['large', Number(options.conversations)],
    ]) {
      const company = await registerCompany(api, `Views${name}`);
      const auth = { authorization: `Bearer ${company.token}` };
      await post(`${base}/v1/attribute-definitions`, auth, { model: 'conversation', key: 'tier', label: 'Tier', type: 'list', options: TIERS });
      log(`seeding ${size} conversations (${name})`);
      await seedInBulk(db, company, size, { attributes: (i) => ({ tier: TIERS[i % TIERS.length] }) });
      const view = await post(`${base}/v1/views`, auth, {
        name: 'Gold queue',
        model: 'conversation',
        filter: VIEW_FILTER,
        sort: 'lastActivity',
        visibility: 'company',
      });
      companies[name] = { company, auth, viewId: view.id };
    }
    for (const [i, filter] of COUNTED_FILTERS.slice(1).entries()) {
      await post(`${base}/v1/views`, companies.large.auth, { name: `View ${i}`, model: 'conversation', filter, visibility: 'company' });
    }
  } finally {
    await client.close();
  }

  const scenarios = {
    'view-small': { path: `/v1/views/${companies.small.viewId}/results?limit=50`, headers: companies.small.auth },
    'view-large': { path: `/v1/views/${companies.large.viewId}/results?limit=50`, headers: companies.large.auth },
    'conversations-large': { path: '/v1/conversations?limit=50', headers: companies.large.auth },
    'counts-large': { path: '/v1/views/counts', headers: companies.large.auth },
  };
  const otherLoad = await foreignLoad();
  const runs = Object.fromEntries(Object.keys(scenarios).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    // Alternating order per round: the machine's speed drifts over tens of seconds.
    const order = round % 2 === 0 ? Object.keys(scenarios) : Object.keys(scenarios).reverse();
    for (const name of order) {
      const { path, headers } = scenarios[name];
      const result = await loadRun({ url: base + path, connections, duration, headers, server: app, engine });
      runs[name].push(result);
      log(`round ${round + 1} ${name}: ${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, ${result.errors} errors`);
      if (result.errors > 0) throw new Error(`${name}: ${result.errors} failed requests`);
    }
  }
  report({ machine, otherLoad, runs });
} finally {
  await app.stop();
  await engine?.stop();
}

async function post(url, headers, body) {
  const response = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

function median(values) {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : Number.NaN;
}

function report({ machine, otherLoad, runs }) {
  const rps = (name) => median(runs[name].map((r) => r.rps));
  const p50 = (name) => median(runs[name].map((r) => r.p50));
  // A request's cost: the app's and the engine's CPU for it.
  const cost = (name) => median(runs[name].map((r) => r.cpuUs + (Number.isFinite(r.engineCpuUs) ? r.engineCpuUs : 0)));
  const lines = [
    `machine: ${JSON.stringify(machine)}; other load: ${JSON.stringify(otherLoad)}`,
    ...Object.keys(runs).map(
      (name) =>
        `${name.padEnd(20)} ${rps(name).toFixed(0).padStart(7)} req/s  p50 ${p50(name).toFixed(1)} ms  ${cost(name).toFixed(0)} µs CPU/request`,
    ),
  ];
  const targets = [
    ['view page cost (CPU per request) at 100k <= 1.5 x at 1k', cost('view-large') / cost('view-small'), (x) => x <= 1.5],
    ['view page >= 0.7 x conversations page req/s (100k)', rps('view-large') / rps('conversations-large'), (x) => x >= 0.7],
    ['views/counts (20) p50 <= 2 x conversations page p50 (100k)', p50('counts-large') / p50('conversations-large'), (x) => x <= 2],
  ];
  for (const [label, ratio, ok] of targets) lines.push(`${ok(ratio) ? 'PASS' : 'MISS'} ${label}: ${ratio.toFixed(2)}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
