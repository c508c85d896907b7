// What metrics cost the conversations page (a script, not a test): npm run bench:metrics [-- options]
// Issue 42: metrics cost at most 2 % of the conversations page's req/s. Two apps measured one after another (`npm run
// bench -- --metrics-off`) differ by more than that from round to round on a shared machine, whatever metrics do, so
// this measures the cost where it is spent: the built app (metrics on, as outside production) runs on CPU 0 with a
// V8 CPU profile, a company of --conversations is seeded, and the page is loaded from CPU 1 for --duration seconds.
// Of the app's busy samples while it served the page, those in the metrics' own code are counted: prom-client, the
// Metrics service and the request-timing middleware, up to where that middleware hands the request on (the rest of
// the request is below its `next()`, and is not metrics' doing). Throughput is bound by the core the app shares with
// the engine, so the share of that core's CPU is the share of req/s metrics take.
// Options: --conversations 20000 --duration 20 --connections 50 --interval 250 (the profile's sampling, µs)
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rerunPinnedUnderLock } from '../harness/pinning.mjs';

rerunPinnedUnderLock(fileURLToPath(import.meta.url));

const { Api } = await import('../harness/api.mjs');
const { startApp } = await import('./lib/app.mjs');
const { loadRun } = await import('./lib/load.mjs');
const { describeMachine, foreignLoad } = await import('./lib/machine.mjs');
const { progressLog } = await import('./lib/scenario.mjs');
const { connect, registerCompany, seedInBulk } = await import('./lib/seed.mjs');

const { values: options } = parseArgs({
  options: {
    conversations: { type: 'string', default: '20000' },
    duration: { type: 'string', default: '20' },
    connections: { type: 'string', default: '50' },
    interval: { type: 'string', default: '250' },
  },
});
const TARGET_SHARE = 0.02;
/** The request-timing middleware's two functions (src/app.setup.ts). */
const HTTP_TIMING = new Set(['timeHttpRequest', 'observeHttpRequest']);
const PAGE = '/v1/conversations?limit=50';
const log = progressLog('metrics');

const profileDir = mkdtempSync(join(tmpdir(), 'parley-metrics-prof-'));
const { app, engine, base, databaseUri } = await startApp({
  engineProcess: true,
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, `--cpu-prof-interval=${Number(options.interval)}`],
});
let load;
let otherLoad;
try {
  const metricsServed = await fetch(`${base}/metrics`);
  if (!metricsServed.ok || !(await metricsServed.text()).includes('parley_http_request_duration_seconds')) {
    throw new Error(`the app does not serve its metrics (GET /metrics ${metricsServed.status}): nothing to measure`);
  }
  const company = await registerCompany(new Api(base), 'Metrics');
  const { client, db } = await connect(databaseUri);
  try {
    log(`seeding ${options.conversations} conversations`);
    await seedInBulk(db, company, Number(options.conversations));
  } finally {
    await client.close();
  }
  const headers = { authorization: `Bearer ${company.token}` };
  otherLoad = await foreignLoad();
  await loadRun({ url: base + PAGE, connections: Number(options.connections), duration: 3, headers });
  load = await loadRun({
    url: base + PAGE,
    connections: Number(options.connections),
    duration: Number(options.duration),
    headers,
    server: app,
    engine,
  });
  log(`conversations page: ${load.rps.toFixed(0)} req/s, ${load.errors} errors`);
  if (load.errors > 0) throw new Error(`${load.errors} failed requests`);
} finally {
  // The profile is written when the app exits.
  await app.stop();
  await engine?.stop();
}

const [file] = readdirSync(profileDir).filter((name) => name.endsWith('.cpuprofile'));
if (!file) throw new Error(`no CPU profile in ${profileDir}`);
const share = metricsShare(JSON.parse(readFileSync(join(profileDir, file), 'utf8')));
rmSync(profileDir, { recursive: true, force: true });

const metricsUs = share.share * load.cpuUs;
// Of the core the app and the engine share, what metrics take: the share of req/s they cost.
const ofCore = metricsUs / (load.cpuUs + load.engineCpuUs);
const lines = [
  `machine: ${JSON.stringify(describeMachine())}; other load: ${JSON.stringify(otherLoad)}`,
  `conversations page (${options.conversations} conversations): ${load.rps.toFixed(0)} req/s, app ${load.cpuUs.toFixed(0)} µs and engine ${load.engineCpuUs.toFixed(0)} µs of CPU a request`,
  `the app's busy samples while serving it: ${share.busy}, in metrics' code: ${share.metrics} (${(share.share * 100).toFixed(2)} %: ${metricsUs.toFixed(1)} µs a request)`,
  `where: ${share.top.map(([name, count]) => `${name} ${count}`).join(', ')}`,
  `${ofCore <= TARGET_SHARE ? 'PASS' : 'MISS'} metrics' share of the page's req/s (their CPU / the app's and the engine's): ${(ofCore * 100).toFixed(2)} % (target <= ${TARGET_SHARE * 100} %)`,
];
process.stdout.write(`${lines.join('\n')}\n`);

/**
 * The samples of the window in which the page was served (from the first to the last sample in the conversations
 * controller), and among them those spent in metrics' code: a sample counts when, walking from its function towards
 * the root, a metrics frame comes before any frame of Express's router (which the middleware's `next()` enters).
 */
function metricsShare(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const isMetrics = ({ url, functionName }) =>
    url.includes('/prom-client/') || url.endsWith('/dist/metrics/metrics.js') || HTTP_TIMING.has(functionName);
  const isRouter = ({ url }) => /\/(express|router)\/(lib\/)?/.test(url);
  const inController = ({ url }) => url.endsWith('/dist/conversations/conversations.controller.js');
  const walk = (id, test, stop) => {
    for (let at = id; at !== undefined; at = parents.get(at)) {
      const frame = nodes.get(at).callFrame;
      if (test(frame)) return true;
      if (stop?.(frame)) return false;
    }
    return false;
  };
  const times = [];
  let at = profile.startTime;
  for (const delta of profile.timeDeltas) times.push((at += delta));
  const served = profile.samples.map((id, i) => (walk(id, inController) ? times[i] : null)).filter((t) => t !== null);
  const [from, to] = [served[0], served[served.length - 1]];
  let busy = 0;
  let metrics = 0;
  const where = new Map();
  profile.samples.forEach((id, i) => {
    if (times[i] < from || times[i] > to) return;
    const { functionName } = nodes.get(id).callFrame;
    if (functionName === '(idle)' || functionName === '(program)') return;
    busy++;
    if (!walk(id, isMetrics, isRouter)) return;
    metrics++;
    const name = functionName || '(anonymous)';
    where.set(name, (where.get(name) ?? 0) + 1);
  });
  return { busy, metrics, share: metrics / busy, top: [...where].sort((a, b) => b[1] - a[1]).slice(0, 6) };
}
