// Benchmark of the whole product (a script, not a test): npm run bench [-- options]
// Starts the built app (dist/main.js, on MONGODB_URI or the embedded engine in its own process, as a
// deployment runs its database, so that the app's RSS is the app's own) on CPU 0, seeds 20 companies (one
// built through the API, one with 100 000 conversations and 18 with 1 000 written in bulk), then measures
// from CPU 1 with autocannon, in interleaved rounds: six API scenarios against bare node:http and a bare
// NestJS-Express app serving the same answers (and, for the list pages, one that also runs the page's reads);
// the write routes against bare NestJS-Express issuing their very database commands (captured from a real request);
// the conversations page at 1k and 100k conversations; the
// webhook fan-out's drain (a backlog of --events deliveries per webhook, built while the lanes are held, then
// delivered) with and without a dead and a slow receiver; the app's RSS. It prints the figures and
// PASS/MISS per target, and exits 0 either way. The whole run holds /tmp/parley-load.lock (flock).
// Options: --rounds 3 --duration 10 (s per scenario and round) --connections 50 --conversations 100000
// --events 5000 --fanout-rounds <rounds> --fanout-only (only the fan-out: no request rounds, no bulk seeding) --engine-in-app (the embedded engine inside the app's process, as
// `npm start` runs it: the app's RSS then holds the whole database) --app-node-options="<node flags for
// the app>" --cpu-prof (profile of the app into bench/profiles/) --engine-cpu-prof (of the engine's process,
// into bench/profiles/engine/) --scenarios settings,inbound (only these request scenarios; names in
// lib/scenarios.mjs) --durable (also a second app whose engine keeps its data in a temporary data directory,
// seeded alike: each selected scenario is measured on both, in the same rounds) --metrics-off (likewise, a second app
// without metrics, as production runs by default: the first app's metrics cost) --messages 1000000 (bulk messages in
// all, 2 per conversation of the 100k company and the rest over the 18 bulk companies; seeded only when a scenario
// needs them, the message search; 0: none).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rerunPinnedUnderLock } from '../harness/pinning.mjs';

rerunPinnedUnderLock(fileURLToPath(import.meta.url));

const { Api } = await import('../harness/api.mjs');
const { APP_NODE_FLAGS, startApp } = await import('./lib/app.mjs');
const { describeMachine, foreignLoad } = await import('./lib/machine.mjs');
const { drain, startReceivers } = await import('./lib/fanout.mjs');
const { printFanOutReport, printReport } = await import('./lib/report.mjs');
const { runRounds, WRITE_SCENARIOS } = await import('./lib/rounds.mjs');
const { appScenarios, INBOX_PATH } = await import('./lib/scenarios.mjs');
const { connect, registerCompany, seedInBulk, seedThroughApi } = await import('./lib/seed.mjs');

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    conversations: { type: 'string', default: '100000' },
    events: { type: 'string', default: '5000' },
    'fanout-only': { type: 'boolean', default: false },
    'fanout-rounds': { type: 'string' },
    'cpu-prof': { type: 'boolean', default: false },
    'engine-cpu-prof': { type: 'boolean', default: false },
    'engine-in-app': { type: 'boolean', default: false },
    'app-node-options': { type: 'string', default: '' },
    'engine-node-options': { type: 'string', default: '' },
    scenarios: { type: 'string' },
    durable: { type: 'boolean', default: false },
    'metrics-off': { type: 'boolean', default: false },
    messages: { type: 'string', default: '1000000' },
  },
});
const rounds = Number(options.rounds);
const duration = Number(options.duration);
const connections = Number(options.connections);
const largeSize = Number(options.conversations);
const events = Number(options.events);
const fanOutRounds = Number(options['fanout-rounds'] ?? rounds);
const COMPANIES = 20;
const SMALL_SIZE = 1_000;
const THREAD_LENGTH = 200;

const log = (line) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const machine = describeMachine();

// --cpu-prof: the app writes a V8 CPU profile of the whole run into bench/profiles/ when it stops.
const profileDir = fileURLToPath(new URL('profiles', import.meta.url));
// --app-node-options="--max-semi-space-size=64": Node.js flags for the app, after its production ones (APP_NODE_FLAGS), to measure a runtime setting.
const appNodeOptions = options['app-node-options'].split(/\s+/).filter(Boolean);
const nodeArgs = [...appNodeOptions, ...(options['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [])];
// --engine-cpu-prof: the engine's own process writes its profile into bench/profiles/engine/.
// --engine-node-options="...": the same for the engine's own process.
const engineNodeArgs = [
  ...options['engine-node-options'].split(/\s+/).filter(Boolean),
  ...(options['engine-cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDir, 'engine')}`] : []),
];
const engineProcess = !options['engine-in-app'];
const selected = options.scenarios?.split(',').map((name) => name.trim());
// Bulk messages only for the scenarios that read them (a million take a minute or two to seed, and ~1 GB of the engine).
const totalMessages = Number(options.messages);
const seedMessages = totalMessages > 0 && (!selected || selected.includes('search-large'));
if (options.durable && process.env.MONGODB_URI) throw new Error('--durable measures the embedded engine: unset MONGODB_URI');
if (options['metrics-off'] && (process.env.MONGODB_URI || !engineProcess)) {
  // Its production mode needs MONGODB_URI, and a database of its own: the engine's own process gives both.
  throw new Error('--metrics-off runs its app on an engine process of its own: unset MONGODB_URI, drop --engine-in-app');
}
// Second apps, seeded alike, each measuring every selected scenario in the same rounds as the first ("(<label>)" rows,
// set against the first app's in the report). `metrics-off`: the app as production runs it by default, without
// METRICS_PORT or METRICS_TOKEN (no request histogram, no /metrics), every other default that NODE_ENV=production
// changes set back to the first app's, so that metrics are the one difference.
const variants = [
  ...(options.durable ? [{ key: 'durable', label: 'durable', dataDir: mkdtempSync(join(tmpdir(), 'parley-bench-data-')) }] : []),
  ...(options['metrics-off']
    ? [
        {
          key: 'metrics-off',
          label: 'metrics off',
          env: {
            NODE_ENV: 'production',
            WEBHOOK_SECRET_KEYS: `bench:${randomBytes(32).toString('base64')}`,
            ALLOW_REGISTRATION: 'true',
            DOCS_ENABLED: 'true',
          },
        },
      ]
    : []),
];

const memory = await startApp({ nodeArgs, engineProcess, engineNodeArgs });
const { app, engine, base } = memory;
const durable = variants.find((variant) => variant.key === 'durable');
const database =
  (process.env.MONGODB_URI ? 'MONGODB_URI' : `embedded engine, in ${engine ? 'its own process (also on CPU 0)' : 'the app process'}`) +
  (durable ? `; "(durable)" rows: a second app and engine with a data directory in ${durable.dataDir}` : '') +
  (variants.some((variant) => variant.key === 'metrics-off') ? '; "(metrics off)" rows: a second app as production runs by default, without metrics' : '') +
  `; app run with ${[...APP_NODE_FLAGS, ...appNodeOptions].join(' ')}`;
const rss = { started: app.rssMiB() };
try {
  // Within the try: a second app that does not start must not leave the first one running.
  for (const variant of variants) {
    variant.stack = await startApp({ nodeArgs, engineProcess, engineNodeArgs, dataDir: variant.dataDir, env: variant.env });
  }
  log(`app on ${base} (pid ${app.pid}), database: ${database}`);
  if (options['fanout-only']) {
    const api = new Api(base);
    const [fanOutHealthy, fanOutBad] = [await registerCompany(api, 'FanOutHealthy'), await registerCompany(api, 'FanOutBad')];
    const otherLoad = await foreignLoad();
    const fan = await measureFanOut({ fanOutHealthy, fanOutBad });
    rss.afterFanOut = app.rssMiB();
    printFanOutReport({ machine, otherLoad, database, events, fan, rss });
  } else {
    await fullRun();
  }
} finally {
  for (const stack of [memory, ...variants.map((variant) => variant.stack)]) {
    await stack?.app.stop();
    await stack?.engine?.stop();
  }
  for (const { dataDir } of variants) if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}

/** The request rounds against the bare servers, the page at scale, the fan-out's drain and the RSS, then the report. */
async function fullRun() {
  const seeded = await seed(memory);
  const variantsSeeded = [];
  for (const variant of variants) variantsSeeded.push({ variant, seeded: await seed(variant.stack) });
  rss.seeded = app.rssMiB();
  log(`seeded; app RSS ${rss.seeded.toFixed(0)} MiB`);

  const all = appScenarios(seeded);
  const unknown = (selected ?? []).filter((name) => !all.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}; choose from ${all.map((s) => s.name).join(', ')}`);
  const pick = (list) => (selected ? list.filter((s) => selected.includes(s.name)) : list);
  const scenarios = pick(all);
  for (const { variant, seeded: variantSeeded } of variantsSeeded) {
    const onVariant = pick(appScenarios(variantSeeded)).map((s) => ({
      ...s,
      name: `${s.name}-${variant.key}`,
      label: `${s.label} (${variant.label})`,
      baseline: s.baseline ?? s.name,
      reference: s.name,
      variant: variant.key,
      server: variant.stack.app,
      engine: variant.stack.engine,
      base: variant.stack.base,
    }));
    scenarios.push(...onVariant);
  }
  // The bare servers serve the in-memory app's answer for every scenario measured (its own, or its baseline's).
  const bodies = {};
  for (const name of new Set(scenarios.map((s) => s.baseline ?? s.name))) {
    const s = all.find((candidate) => candidate.name === name);
    const body = typeof s.body === 'function' ? s.body() : s.body;
    bodies[name] = await fetchText(base + s.path, { method: s.method ?? 'GET', headers: s.headers, body });
  }
  const byName = (name) => all.find((s) => s.name === name);
  const scale = [
    { name: 'conversations page', path: '/v1/conversations?limit=50', small: byName('conversations').headers, large: byName('conversations-large').headers },
    { name: 'inbox page', path: INBOX_PATH, small: byName('inbox').headers, large: byName('inbox-large').headers },
  ];

  // Not with the engine in the app's process: the reads would load the app, not a database of their own. `answers`:
  // the app's pages as they are now (the write scenarios add messages), against which the reads are checked.
  const answer = ({ path, headers }) => fetchText(base + path, { method: 'GET', headers });
  const answers = async (names) => Object.fromEntries(await Promise.all(names.map(async (name) => [name, await answer(all.find((s) => s.name === name))])));
  const reads = engineProcess
    ? {
        uri: memory.databaseUri,
        companyId: seeded.small.companyId,
        agentId: seeded.small.agentId,
        threadId: seeded.smallData.threadId,
        inboxCompanyId: seeded.inboxCompany.companyId,
        inboxAgentId: seeded.inboxCompany.agentId,
        answers,
      }
    : undefined;
  // The write routes' commands are captured from a real request of each, on this database (same caveat as the reads).
  const writeScenarios = scenarios.filter((s) => !s.server && WRITE_SCENARIOS.includes(s.name));
  const writes =
    engineProcess && writeScenarios.length
      ? {
          env: memory.env,
          requests: writeScenarios.map((s) => ({ name: s.name, method: s.method, path: s.path, headers: s.headers, body: typeof s.body === 'function' ? s.body() : s.body })),
        }
      : undefined;
  const { runs, scaleTimes, otherLoad, captured } = await runRounds({ app, engine, appBase: base, scenarios, bodies, rounds, duration, connections, scale, reads, writes, log });
  rss.afterLoad = app.rssMiB();

  const fan = await measureFanOut(seeded);
  rss.afterFanOut = app.rssMiB();
  rss.engine = engine?.rssMiB();
  rss.durableEngine = durable?.stack.engine?.rssMiB();

  printReport({
    setup: { machine, otherLoad, database, rounds, duration, connections, events, companies: COMPANIES, largeSize, smallSize: SMALL_SIZE },
    scenarios,
    bodies,
    runs,
    scaleTimes,
    fan,
    rss,
    captured,
  });
}

/** The drain of --events deliveries per webhook, --fanout-rounds times each way (without, then with the bad receivers). */
async function measureFanOut({ fanOutHealthy, fanOutBad }) {
  const fan = { healthy: [], bad: [] };
  if (fanOutRounds === 0) return fan;
  log(`webhook fan-out drain: ${events} events, ${fanOutRounds} round(s) each way`);
  const receivers = await startReceivers();
  const api = new Api(base);
  const { client, db } = await connect(memory.databaseUri);
  try {
    for (let round = 0; round < fanOutRounds; round++) {
      fan.healthy.push(await drain(api, db, fanOutHealthy, receivers, { events, withBad: false, app, engine }));
      fan.bad.push(await drain(api, db, fanOutBad, receivers, { events, withBad: true, app, engine }));
      const [healthy, bad] = [fan.healthy.at(-1), fan.bad.at(-1)];
      log(
        `fan-out round ${round + 1}: ${healthy.perSecond.toFixed(0)} / ${bad.perSecond.toFixed(0)} healthy deliveries/s, ` +
          `p99 ${healthy.p99} / ${bad.p99} ms from the resume, app + engine CPU ${(healthy.appCpuUs + healthy.engineCpuUs).toFixed(0)} / ` +
          `${(bad.appCpuUs + bad.engineCpuUs).toFixed(0)} µs per delivery`,
      );
    }
  } finally {
    await client.close();
    await receivers.close();
  }
  return fan;
}

/** Seeds a stack: COMPANIES companies, the small one through the API, the others in bulk. */
async function seed({ base: stackBase, databaseUri }) {
  const api = new Api(stackBase);
  log(`seeding ${COMPANIES} companies on ${stackBase}`);
  const companies = [];
  for (let i = 0; i < COMPANIES; i++) companies.push(await registerCompany(api, `Company${i}`));
  const [small, large, fanOutHealthy, fanOutBad, inboxCompany] = companies;
  const smallData = await seedThroughApi(api, small, { contacts: SMALL_SIZE, threadLength: THREAD_LENGTH });
  const { client, db } = await connect(databaseUri);
  const bulk = companies.slice(2);
  // The 100k company holds 2 messages a conversation; the bulk companies share the rest of the messages.
  const largeMessages = seedMessages ? 2 : 0;
  const perSmall = seedMessages ? Math.max(0, Math.ceil((totalMessages - largeMessages * largeSize) / (bulk.length * SMALL_SIZE))) : 0;
  try {
    if (seedMessages) log(`seeding ${largeMessages * largeSize + perSmall * SMALL_SIZE * bulk.length} messages`);
    await seedInBulk(db, large, largeSize, { messagesPerConversation: largeMessages, seed: 1 });
    for (const [i, company] of bulk.entries()) await seedInBulk(db, company, SMALL_SIZE, { messagesPerConversation: perSmall, seed: i + 2 });
  } finally {
    await client.close();
  }
  return { small, large, smallData, fanOutHealthy, fanOutBad, inboxCompany };
}

async function fetchText(url, { method, headers, body }) {
  const response = await fetch(url, { method, headers, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
  return text;
}
