// Crafted-flows drill (contract section 18: no company's flows can slow another's). One API process over the
// standalone engine, at the default rate limits. Company "Crafted" has the worst keyword triggers the limits allow
// (100 active flows × 50 keywords of up to 100 characters, lib/crafted-flows.mjs) and sends crafted 2 045-character
// messages at its API key's limit (THROTTLE_LIMIT a minute: 5 a second); company "Normal" has 10 agents reading
// GET /v1/conversations 4 times a second each. Phases of DRILL_CRAFTED_SECONDS (default 15) alternate, Normal
// alone and beside Crafted, twice; Normal's p95 beside Crafted must stay within 1.5× of its p95 alone. Also
// measured in this process: the CPU of matching one crafted message against the 5 000 keywords (bound 5 ms), and
// the longest GET /health answer of each phase (probed every 50 ms from a thread of its own): a background step
// that held the API's event loop would show there. Exits 1 on a violation.
// Run: npm run drill -- crafted-flows   (or node drill/crafted-flows.mjs after nest build)
import { Worker } from 'node:worker_threads';
import { percentile } from '../harness/stats.mjs';
import { apiClient } from './lib/client.mjs';
import { CRAFTED, CRAFTED_FLOWS } from './lib/crafted-flows.mjs';
import { createApiKey, PASSWORD, registerCompany } from './lib/fixtures.mjs';
import { startStack } from './lib/processes.mjs';
import { formatCounts, increment } from './lib/report.mjs';

const PHASE_SECONDS = Number(process.env.DRILL_CRAFTED_SECONDS ?? 15);
const ROUNDS = 2;
const READERS = 10;
const READS_PER_SECOND = 4;
const CRAFTED_PER_SECOND = 5;
const MAX_P95_RATIO = 1.5;
const MAX_MATCH_MS = 5;
const CONVERSATIONS = 60;
const KINDS = Object.keys(CRAFTED);
/** DRILL_CRAFTED_FLOWS=0: the same traffic from a company without flows, to tell the flows' cost from the messages'. */
const FLOWS = Number(process.env.DRILL_CRAFTED_FLOWS ?? CRAFTED_FLOWS);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `send` every `intervalMs` until `until`, never two at once; records each answer with `record`. */
async function paced(until, intervalMs, send, record) {
  while (Date.now() < until) {
    const started = performance.now();
    record(await send(), performance.now() - started);
    await sleep(Math.max(0, intervalMs - (performance.now() - started)));
  }
}

async function seedNormal(client) {
  const company = await registerCompany(client, 'Normal');
  const { key } = await createApiKey(client, company, ['messages:write']);
  for (let i = 0; i < CONVERSATIONS; i += 1) {
    await client.expect(201, 'POST', '/api/external/messages', { apiKey: key, json: { from: { phone: `+1415555${String(1000 + i)}` }, text: 'Hello' } });
  }
  const tokens = [];
  for (let i = 0; i < READERS; i += 1) {
    const email = `reader-${i}-${company.companyId}@drill.example`;
    await client.expect(201, 'POST', '/v1/agents', { token: company.token, json: { name: `Reader ${i}`, email, role: 'agent', password: PASSWORD } });
    tokens.push((await client.expect(200, 'POST', '/v1/auth/login', { json: { email, password: PASSWORD } })).accessToken);
  }
  return tokens;
}

async function seedCrafted(client) {
  const company = await registerCompany(client, 'Crafted');
  for (let flow = 0; flow < FLOWS; flow += 1) {
    const kind = KINDS[flow % KINDS.length];
    await client.expect(201, 'POST', '/v1/flows', {
      token: company.token,
      json: { name: `Crafted ${flow}`, isActive: true, trigger: { type: 'inbound_message', keywords: CRAFTED[kind].keywords(flow) }, steps: [{ type: 'add_tags', tags: ['crafted'] }] },
    });
  }
  return (await createApiKey(client, company, ['messages:write'])).key;
}

/** The CPU of matching one crafted message against every crafted flow, in this process, with the built code. */
async function matchingCost() {
  const { compileKeywords, KeywordIndex, scanText } = await import('../dist/flows/keyword-match.js');
  const results = {};
  for (const kind of KINDS) {
    const { message, keywords } = CRAFTED[kind];
    const index = new KeywordIndex(Array.from({ length: CRAFTED_FLOWS }, (_, flow) => compileKeywords(keywords(flow))));
    const costs = [];
    for (let run = 0; run < 50; run += 1) {
      const before = process.cpuUsage();
      if (index.matching(scanText(message)).size !== 0) throw new Error(`a crafted ${kind} keyword matched`);
      const used = process.cpuUsage(before);
      costs.push((used.user + used.system) / 1000);
    }
    results[kind] = { first: costs[0], p50: percentile(costs, 50), p90: percentile(costs, 90) };
  }
  return results;
}

function startHealthProbe(baseUrl) {
  const worker = new Worker(new URL('./lib/health-probe.mjs', import.meta.url), { workerData: { url: `${baseUrl}/health`, intervalMs: 50, timeoutMs: 5000 } });
  return {
    stop: async () => {
      const probes = new Promise((resolve) => worker.once('message', resolve));
      worker.postMessage('stop');
      const result = await probes;
      await worker.terminate();
      return result;
    },
  };
}

/** One phase: Normal's readers, and Crafted's sender when `crafted`; answers the readers' latencies and what both got. */
async function phase(client, tokens, craftedKey, crafted, baseUrl) {
  const until = Date.now() + PHASE_SECONDS * 1000;
  const latencies = [];
  const statuses = { normal: {}, crafted: {} };
  const probe = startHealthProbe(baseUrl);
  const readers = tokens.map((token, i) =>
    sleep((i * 1000) / READS_PER_SECOND / READERS).then(() =>
      paced(
        until,
        1000 / READS_PER_SECOND,
        () => client.call('GET', '/v1/conversations?limit=20', { token }),
        (response, ms) => {
          increment(statuses.normal, response.status);
          if (response.status === 200) latencies.push(ms);
        },
      ),
    ),
  );
  let sent = 0;
  const sender = crafted
    ? paced(
        until,
        1000 / CRAFTED_PER_SECOND,
        () => {
          const kind = KINDS[sent % KINDS.length];
          sent += 1;
          return client.call('POST', '/api/external/messages', { apiKey: craftedKey, json: { from: { phone: `+1415666${String(1000 + (sent % 20))}` }, text: CRAFTED[kind].message } });
        },
        (response) => increment(statuses.crafted, response.status),
      )
    : Promise.resolve();
  await Promise.all([...readers, sender]);
  const probes = await probe.stop();
  return { latencies, statuses, healthMax: Math.max(...probes.map((p) => p.ms)) };
}

async function main() {
  const stack = await startStack('drill-crafted-flows', { THROTTLE_LIMIT: '300', AUTH_FAILURE_LIMIT: '20' });
  const client = apiClient(stack.api.baseUrl, { connections: READERS + 2 });
  const violations = [];
  try {
    const matching = await matchingCost();
    const tokens = await seedNormal(client);
    const craftedKey = await seedCrafted(client);
    const results = { alone: [], crafted: [] };
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const crafted of [false, true]) {
        // Crafted's window of the rate limit starts afresh, so that it sends at its limit for the whole phase.
        await sleep(crafted ? 0 : 1000);
        results[crafted ? 'crafted' : 'alone'].push(await phase(client, tokens, craftedKey, crafted, stack.api.baseUrl));
      }
    }
    const summary = (runs) => {
      const latencies = runs.flatMap((run) => run.latencies);
      return { n: latencies.length, p50: percentile(latencies, 50), p95: percentile(latencies, 95), max: Math.max(...latencies), healthMax: Math.max(...runs.map((run) => run.healthMax)) };
    };
    const alone = summary(results.alone);
    const beside = summary(results.crafted);
    const ratio = beside.p95 / alone.p95;
    const counts = (runs, who) => {
      const all = {};
      for (const run of runs) for (const [status, n] of Object.entries(run.statuses[who])) all[status] = (all[status] ?? 0) + n;
      return formatCounts(all);
    };

    console.log(`Crafted-flows drill: ${ROUNDS} rounds of ${PHASE_SECONDS} s alone and ${PHASE_SECONDS} s beside the crafted company`);
    for (const [kind, cost] of Object.entries(matching)) {
      console.log(`  matching ${kind.padEnd(11)} one crafted message against ${CRAFTED_FLOWS} flows × 50 keywords: p50 ${cost.p50.toFixed(2)} ms, p90 ${cost.p90.toFixed(2)} ms of CPU (first ${cost.first.toFixed(2)} ms); bound ${MAX_MATCH_MS} ms`);
      if (cost.p50 > MAX_MATCH_MS) violations.push(`matching a crafted ${kind} message costs ${cost.p50.toFixed(2)} ms of CPU, over ${MAX_MATCH_MS}`);
    }
    const line = (label, s) =>
      `  ${label.padEnd(22)} GET /v1/conversations: ${s.n} answers, p50 ${s.p50.toFixed(1)} ms, p95 ${s.p95.toFixed(1)} ms, max ${s.max.toFixed(1)} ms; longest GET /health ${s.healthMax.toFixed(1)} ms`;
    console.log(line('Normal alone', alone));
    console.log(line('Normal beside Crafted', beside));
    console.log(`  Normal's answers       alone ${counts(results.alone, 'normal')}; beside ${counts(results.crafted, 'normal')}`);
    console.log(`  Crafted's messages     ${counts(results.crafted, 'crafted')} (${CRAFTED_PER_SECOND} a second, its key's limit)`);
    console.log(`  p95 ratio              ${ratio.toFixed(2)} (bound ${MAX_P95_RATIO})`);
    if (!(ratio <= MAX_P95_RATIO)) violations.push(`Normal's p95 beside Crafted is ${ratio.toFixed(2)}× its p95 alone, over ${MAX_P95_RATIO}`);
    const craftedAccepted = results.crafted.reduce((n, run) => n + (run.statuses.crafted[201] ?? 0), 0);
    if (craftedAccepted < CRAFTED_PER_SECOND * PHASE_SECONDS * ROUNDS * 0.5) violations.push(`Crafted got only ${craftedAccepted} messages in: the drill did not load the server`);
    if (violations.length) {
      console.log(`\nVIOLATIONS (${violations.length}):\n  ${violations.join('\n  ')}`);
      process.exitCode = 1;
    } else {
      console.log('\nCrafted-flows drill passed.');
    }
  } finally {
    await client.close();
    await stack.stop();
  }
}

await main();
