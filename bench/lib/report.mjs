import { median } from '../../harness/stats.mjs';

/**
 * The open issues' targets: ratios to bare NestJS-Express in the same run (issue 15), the write path and fan-out
 * (issue 12); for the list pages, ratios to the stack's floor (bare NestJS-Express + the page's reads) and the inbox's
 * (issue 26), which replace issue 15's page targets against bare NestJS-Express alone.
 */
export const TARGETS = {
  settingsToNest: 0.75,
  /** A list page's req/s against its floor's, in the same run. */
  pageToFloor: 0.8,
  /** A write route's req/s against its floor's (bare NestJS-Express + its database commands), in the same run (issue 44). */
  writeToFloor: 0.7,
  /** App CPU per inbound message (µs): 1 000 messages/s per app core once the database has cores of its own (issue 44). */
  inboundCpuUs: 1000,
  /** Message search's p50 against the conversations page's, under the same load. */
  searchToPageP50: 3,
  /** The inbox counts' p50 against the conversations page's. */
  countsToPageP50: 1,
  sendToNest: 0.12,
  /** 3x the 234 req/s measured before the event log, in the same run layout. */
  inboundPerSecond: 702,
  scaleRatio: 1.5,
  /** Healthy deliveries per second while a backlog drains, with the dead and slow receivers present (issue 25). */
  deliveriesPerSecond: 1000,
  /** Healthy resume-to-delivery p99 of that drain (ms). */
  fanOutP99Ms: 5000,
  badP99Factor: 2,
  rssAfterLoadMiB: 250,
  rssAfterFanOutMiB: 300,
  /** A scenario on a durable engine against the same on the in-memory engine (req/s). */
  durableToMemory: 0.5,
  /** A scenario with the app's metrics on against the same on an app without them (req/s): metrics cost <= 2 % (issue 42). */
  metricsOnToOff: 0.98,
};

const num = (value, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a');
const pad = (text, width) => String(text).padStart(width);

/** Medians across rounds of one scenario's runs. */
function summarize(runs) {
  return {
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpuUs: median(runs.map((r) => r.cpuUs)),
    engineCpuUs: median(runs.map((r) => r.engineCpuUs)),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
  };
}

function printRequestTable(rows) {
  console.log(
    `${'scenario'.padEnd(48)}${pad('req/s', 9)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('/http', 8)}${pad('/nest', 8)}` +
      `${pad('CPU µs/req', 12)}${pad('engine µs/req', 15)}${pad('non-2xx', 9)}`,
  );
  for (const row of rows) {
    console.log(
      `${row.label.padEnd(48)}${pad(num(row.rps), 9)}${pad(num(row.p50, 2), 9)}${pad(num(row.p99, 2), 9)}` +
        `${pad(row.toHttp === undefined ? '' : num(row.toHttp, 3), 8)}${pad(row.toNest === undefined ? '' : num(row.toNest, 3), 8)}` +
        `${pad(num(row.cpuUs), 12)}${pad(Number.isFinite(row.engineCpuUs) ? num(row.engineCpuUs) : '', 15)}${pad(row.errors, 9)}`,
    );
  }
}

function printFanOut(runs) {
  console.log(
    `${'receivers'.padEnd(34)}${pad('healthy/s', 10)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('drain ms', 10)}` +
      `${pad('app µs/dlv', 12)}${pad('engine µs/dlv', 15)}${pad('CPU-bound/s', 13)}${pad('events/s in', 13)}${pad('backlog ms', 12)}  checks`,
  );
  for (const r of runs) {
    const label = r.withBad ? '3 healthy + dead + slow (2 s)' : '3 healthy only';
    const checks =
      `${r.delivered}/${r.expected} delivered, ${r.badSignatures} bad signatures` +
      (r.withBad ? `, slow got ${r.slowDelivered}, dead refused ${r.deadAttempts} attempts` : '');
    console.log(
      `${label.padEnd(34)}${pad(num(r.perSecond), 10)}${pad(num(r.p50, 1), 9)}${pad(num(r.p99, 1), 9)}${pad(num(r.drainMs), 10)}` +
        `${pad(num(r.appCpuUs), 12)}${pad(num(r.engineCpuUs), 15)}${pad(num(cpuBound(r)), 13)}${pad(num(r.eventsPerSecond), 13)}${pad(num(r.backlogMs), 12)}  ${checks}`,
    );
  }
  console.log(
    'app / engine µs/dlv: CPU time each process spent per healthy delivery while the backlog drained; CPU-bound/s: the ' +
      'healthy deliveries per second that CPU allows on one core of their own (the app and the engine share CPU 0)',
  );
}

/** The fan-out's drain (medians across rounds) and its targets' checks. */
function fanOutSection(fan, events) {
  if (fan.healthy.length === 0) return [];
  console.log(
    `\nWebhook fan-out drain: ${events} message.received events through POST /api/external/messages while the webhooks' lanes were held, ` +
      `then released (medians of ${fan.healthy.length} rounds; healthy/s and percentiles from the release, events/s while the backlog was built):`,
  );
  const healthy = summarizeFanOut(fan.healthy);
  const bad = summarizeFanOut(fan.bad);
  printFanOut([healthy, bad]);
  return [
    {
      name: 'healthy deliveries/s draining a backlog, dead + slow present',
      value: bad.perSecond.toFixed(0),
      target: `>= ${TARGETS.deliveriesPerSecond}`,
      pass: bad.perSecond >= TARGETS.deliveriesPerSecond && bad.delivered === bad.expected && bad.badSignatures === 0,
    },
    {
      name: 'healthy resume-to-delivery p99, dead + slow present (ms)',
      value: bad.p99.toFixed(0),
      target: `< ${TARGETS.fanOutP99Ms}`,
      pass: bad.p99 < TARGETS.fanOutP99Ms,
    },
    {
      name: 'healthy p99 with / without the bad receivers',
      value: (bad.p99 / healthy.p99).toFixed(2),
      target: `<= ${TARGETS.badP99Factor}`,
      pass: bad.p99 <= TARGETS.badP99Factor * healthy.p99,
    },
  ];
}

/** `--fanout-only`: the drain alone, with the machine's load and the app's RSS after it. */
export function printFanOutReport({ machine, otherLoad, database, events, fan, rss }) {
  console.log(`\nParley benchmark, fan-out only: ${machine.cpus} CPUs (${machine.model}), Node.js ${machine.node}`);
  console.log(`other load on the machine before the drain: ${(100 * otherLoad).toFixed(0)}% of its CPU${otherLoad > 0.15 ? ' (*** figures may be disturbed ***)' : ''}`);
  console.log(`database: ${database}`);
  const checks = fanOutSection(fan, events);
  console.log(`\nApp RSS: ${rss.started.toFixed(0)} MiB started, ${rss.afterFanOut.toFixed(0)} MiB after the fan-out\n`);
  printTargets(checks);
}

/** One line per target; a miss is printed loudly but does not fail the run (this is a measurement). */
function printTargets(checks) {
  let missed = 0;
  for (const { name, value, target, pass } of checks) {
    if (!pass) missed += 1;
    console.log(`${pass ? 'PASS' : '*** MISS ***'}  ${name}: ${value} (target ${target})`);
  }
  if (missed > 0) console.log(`\n*** ${missed} TARGET${missed > 1 ? 'S' : ''} MISSED ***`);
}

/** Healthy deliveries per second the app's and the engine's CPU per delivery allow on the one core they share. */
const cpuBound = (r) => 1e6 / (r.appCpuUs + (Number.isFinite(r.engineCpuUs) ? r.engineCpuUs : 0));

/** Medians across fan-out rounds; counts and checks from the worst round. */
function summarizeFanOut(list) {
  return {
    ...list[0],
    perSecond: median(list.map((r) => r.perSecond)),
    eventsPerSecond: median(list.map((r) => r.eventsPerSecond)),
    drainMs: median(list.map((r) => r.drainMs)),
    appCpuUs: median(list.map((r) => r.appCpuUs)),
    engineCpuUs: median(list.map((r) => r.engineCpuUs)),
    p50: median(list.map((r) => r.p50)),
    p99: median(list.map((r) => r.p99)),
    delivered: Math.min(...list.map((r) => r.delivered)),
    badSignatures: list.reduce((sum, r) => sum + r.badSignatures, 0),
  };
}

/** Everything a run measured, then PASS/MISS per target. */
export function printReport({ setup, scenarios, bodies, runs, scaleTimes, fan, rss, captured }) {
  const { machine, otherLoad, database, rounds, duration, connections, events, companies, largeSize, smallSize } = setup;
  const bare = (kind, name) => summarize(runs[kind][name]);
  const rows = scenarios.map((s) => {
    const own = summarize(runs.app[s.name]);
    const baseline = s.baseline ?? s.name;
    return { name: s.name, reference: s.reference, variant: s.variant, label: s.label, ...own, toHttp: own.rps / bare('http', baseline).rps, toNest: own.rps / bare('nest', baseline).rps };
  });
  const row = (name) => rows.find((r) => r.name === name);
  // The list pages' reads alone behind bare NestJS-Express: the most the app's page could reach (bare-reads.server.mjs).
  // The write routes' database commands alone behind it likewise (bare-writes.server.mjs).
  const floors = ['reads', 'writes'].flatMap((kind) =>
    Object.keys(runs[kind]).map((name) => ({ name, kind, ...bare(kind, name), toNest: bare(kind, name).rps / bare('nest', name).rps })),
  );
  const bareRows = Object.keys(bodies).flatMap((name) => [
    { label: `bare node:http, ${name} body (${Buffer.byteLength(bodies[name])} B)`, ...bare('http', name) },
    { label: `bare NestJS-Express, ${name} body`, ...bare('nest', name) },
    ...floors.filter((floor) => floor.name === name).map((floor) => ({ ...floor, label: `bare NestJS-Express + the ${name} ${floor.kind}` })),
  ]);

  console.log(`\nParley benchmark: ${machine.cpus} CPUs (${machine.model}), Node.js ${machine.node}`);
  console.log(`server on CPU 0, autocannon on CPU 1; ${rounds} interleaved rounds of ${duration} s per scenario, -c ${connections}; medians across rounds`);
  console.log(`other load on the machine before the rounds: at most ${(100 * otherLoad).toFixed(0)}% of its CPU${otherLoad > 0.15 ? ' (*** figures may be disturbed ***)' : ''}`);
  console.log(`database: ${database}; ${companies} companies, ${largeSize} + ${smallSize} x ${companies - 1} conversations`);
  console.log(`CPU µs/req: the app's process; engine µs/req: the engine's own process (blank when it runs in the app's)\n`);
  printRequestTable([...rows, ...bareRows]);
  if (floors.length) {
    console.log(
      `\nThe routes' database work alone (driver and engine, no authentication, guards or views) behind bare NestJS-Express, ` +
        `/ bare NestJS-Express: ${floors.map((floor) => `${floor.name} ${floor.toNest.toFixed(3)}`).join(', ')}; the app's route cannot reach more.`,
    );
  }
  for (const [name, { commands, shared }] of Object.entries(captured ?? {})) {
    const others = shared.map((entry) => `${entry.name} ${entry.collection} (${entry.why})`);
    console.log(`The ${name} route's commands (${commands.length}): ${commands.join(', ')}${others.length ? `; not replayed: ${others.join(', ')}` : ''}`);
  }

  // Each round's app / floor, for the pages with a floor: rounds interleave, so each ratio is of the same minutes.
  const floorRounds = floors.filter((floor) => runs.app[floor.name]).map((floor) => ({
    name: floor.name,
    ratios: runs[floor.kind][floor.name].map((run, i) => (runs.app[floor.name][i] ? runs.app[floor.name][i].rps / run.rps : NaN)),
  }));
  if (floorRounds.length) {
    console.log(`\nApp / its floor (req/s), round by round: ${floorRounds.map((f) => `${f.name} ${f.ratios.map((r) => num(r, 2)).join(' / ')}`).join('; ')}`);
  }

  const scales = Object.entries(scaleTimes).map(([name, times]) => {
    const small = median(times.small);
    const large = median(times.large);
    console.log(
      `\n${name}, one request at a time (${times.small.length} each): ${smallSize} conversations median ${small.toFixed(2)} ms, ` +
        `${largeSize} median ${large.toFixed(2)} ms, ratio ${(large / small).toFixed(2)}`,
    );
    return { name, ratio: large / small };
  });

  const checks = fanOutSection(fan, events);

  console.log(
    `\nApp RSS: ${rss.started.toFixed(0)} MiB started, ${rss.seeded.toFixed(0)} MiB seeded, ` +
      `${rss.afterLoad.toFixed(0)} MiB after the request load, ${rss.afterFanOut.toFixed(0)} MiB after the fan-out` +
      `${rss.engine === undefined ? '' : `; the engine's own process ${rss.engine.toFixed(0)} MiB`}` +
      `${rss.durableEngine === undefined ? '' : `, the durable engine's ${rss.durableEngine.toFixed(0)} MiB`}\n`,
  );

  // Each second app's rows against the first app's: the durable engine's cost, and the first app's metrics' cost.
  const variantChecks = rows
    .filter((r) => r.reference && row(r.reference))
    .map((r) => {
      const first = row(r.reference);
      if (r.variant === 'metrics-off') {
        const ratio = first.rps / r.rps;
        return { name: `${first.label} with metrics / without (req/s)`, value: `${ratio.toFixed(3)} (${first.rps.toFixed(0)} vs ${r.rps.toFixed(0)})`, target: `>= ${TARGETS.metricsOnToOff}`, pass: ratio >= TARGETS.metricsOnToOff };
      }
      const ratio = r.rps / first.rps;
      return { name: `${r.label} / in memory (req/s)`, value: `${ratio.toFixed(2)} (${r.rps.toFixed(0)} vs ${first.rps.toFixed(0)})`, target: `>= ${TARGETS.durableToMemory}`, pass: ratio >= TARGETS.durableToMemory };
    });
  const toNest = (name, label, target) => {
    const r = row(name);
    return r ? [{ name: `${label} / bare NestJS-Express`, value: r.toNest.toFixed(3), target: `>= ${target}`, pass: r.toNest >= target }] : [];
  };
  const toFloor = (name, label, target = TARGETS.pageToFloor) => {
    const r = row(name);
    const floor = floors.find((f) => f.name === name);
    if (!r || !floor) return [];
    // The median of the rounds' ratios, each of the same minutes: one round whose floor (or app) collapsed moves it
    // less than it moves a ratio of the two medians, which once read 1.10 from rounds of 0.58, 0.61 and 47.8.
    const rounds = floorRounds.find((f) => f.name === name)?.ratios.filter(Number.isFinite) ?? [];
    const ratio = rounds.length ? median(rounds) : r.rps / floor.rps;
    return [
      {
        name: `${label} / its floor (req/s, median of the rounds' ratios)`,
        value: `${ratio.toFixed(3)} (medians ${r.rps.toFixed(0)} vs ${floor.rps.toFixed(0)})`,
        target: `>= ${target}`,
        pass: ratio >= target,
      },
    ];
  };
  const p50Against = (name, label, reference, factor) => {
    const r = row(name);
    const ref = row(reference);
    if (!r || !ref) return [];
    const ratio = r.p50 / ref.p50;
    return [{ name: `${label} p50 / ${reference} page p50`, value: `${ratio.toFixed(2)} (${r.p50.toFixed(2)} vs ${ref.p50.toFixed(2)} ms)`, target: `<= ${factor}`, pass: ratio <= factor }];
  };
  const inbound = row('inbound');
  printTargets([
    ...toNest('settings', 'GET /v1/settings', TARGETS.settingsToNest),
    ...toFloor('conversations', 'conversations page'),
    ...toFloor('messages', 'messages page'),
    ...toFloor('inbox', 'inbox page'),
    ...p50Against('search-large', 'message search', 'conversations', TARGETS.searchToPageP50),
    ...p50Against('counts-large', 'counts (100k)', 'conversations', TARGETS.countsToPageP50),
    ...toNest('send', 'POST /v1/conversations/:id/messages', TARGETS.sendToNest),
    ...(inbound ? [{ name: 'POST /api/external/messages (req/s)', value: inbound.rps.toFixed(0), target: `>= ${TARGETS.inboundPerSecond}`, pass: inbound.rps >= TARGETS.inboundPerSecond }] : []),
    ...toFloor('inbound', 'POST /api/external/messages', TARGETS.writeToFloor),
    ...toFloor('send', 'POST /v1/conversations/:id/messages', TARGETS.writeToFloor),
    ...(inbound ? [{ name: 'app CPU per inbound message (µs)', value: inbound.cpuUs.toFixed(0), target: `<= ${TARGETS.inboundCpuUs}`, pass: inbound.cpuUs <= TARGETS.inboundCpuUs }] : []),
    ...scales.map(({ name, ratio }) => ({ name: `${name} at ${largeSize} / at ${smallSize} (medians)`, value: ratio.toFixed(2), target: `<= ${TARGETS.scaleRatio}`, pass: ratio <= TARGETS.scaleRatio })),
    ...checks,
    ...variantChecks,
    { name: 'app RSS after the request load (MiB)', value: rss.afterLoad.toFixed(0), target: `< ${TARGETS.rssAfterLoadMiB}`, pass: rss.afterLoad < TARGETS.rssAfterLoadMiB },
    ...(fan.healthy.length > 0
      ? [{ name: 'app RSS after the fan-out (MiB)', value: rss.afterFanOut.toFixed(0), target: `< ${TARGETS.rssAfterFanOutMiB}`, pass: rss.afterFanOut < TARGETS.rssAfterFanOutMiB }]
      : []),
  ]);
}
