// Load drill: 60 s at saturation (autocannon, 100 connections) of a mixed workload on one API process over the
// standalone engine: conversation and message lists, agent replies, inbound channel messages (with a webhook
// subscribed), settings. Meanwhile /health is probed every second from a thread of its own. No 5xx, no connection
// error, every probe answered 200 within 2 s. Exits 1 on a violation.
// Run: npm run drill -- load   (or node drill/load.mjs after nest build); DRILL_LOAD_SECONDS shortens it.
import autocannon from 'autocannon';
import { Worker } from 'node:worker_threads';
import { startReceiver } from '../harness/receivers.mjs';
import { percentile } from '../harness/stats.mjs';
import { apiClient } from './lib/client.mjs';
import { createApiKey, registerCompany } from './lib/fixtures.mjs';
import { startStack } from './lib/processes.mjs';
import { formatCounts } from './lib/report.mjs';

const SECONDS = Number(process.env.DRILL_LOAD_SECONDS ?? 60);
const CONNECTIONS = 100;
const CONVERSATIONS = 20;
const CONTACTS = 500;
const PROBE_INTERVAL_MS = 1000;
const PROBE_LIMIT_MS = 2000;

const pick = (values) => values[Math.floor(Math.random() * values.length)];

async function seed(client, receiver) {
  const company = await registerCompany(client, 'Load Drill Co');
  const { key } = await createApiKey(client, company, ['messages:write']);
  await client.expect(201, 'POST', '/v1/webhooks', { token: company.token, json: { url: receiver.url('/load'), events: ['message.received'] } });
  const conversations = [];
  for (let i = 0; i < CONVERSATIONS; i += 1) {
    const body = await client.expect(201, 'POST', '/api/external/messages', {
      apiKey: key,
      json: { from: { phone: `+1415556${String(1000 + i)}`, name: `Seeded ${i}` }, text: 'Hello' },
    });
    conversations.push(body.data.conversation.id);
  }
  return { token: company.token, key, conversations };
}

/** The mixed workload: each connection goes through these in turn, on a random conversation or contact. */
function workload({ token, key, conversations }) {
  const bearer = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const external = { 'x-api-key': key, 'content-type': 'application/json' };
  return [
    { method: 'GET', path: '/v1/conversations?limit=20', headers: bearer },
    { method: 'GET', headers: bearer, setupRequest: (request) => ({ ...request, path: `/v1/conversations/${pick(conversations)}/messages?limit=20` }) },
    {
      method: 'POST',
      headers: bearer,
      setupRequest: (request) => ({ ...request, path: `/v1/conversations/${pick(conversations)}/messages`, body: JSON.stringify({ text: 'On it' }) }),
    },
    {
      method: 'POST',
      path: '/api/external/messages',
      headers: external,
      setupRequest: (request) => {
        const contact = Math.floor(Math.random() * CONTACTS);
        return { ...request, body: JSON.stringify({ from: { phone: `+1415557${String(1000 + contact)}` }, text: 'Where is my order?' }) };
      },
    },
    { method: 'GET', path: '/v1/settings', headers: bearer },
  ];
}

function startProbe(baseUrl) {
  const worker = new Worker(new URL('./lib/health-probe.mjs', import.meta.url), {
    workerData: { url: `${baseUrl}/health`, intervalMs: PROBE_INTERVAL_MS, timeoutMs: 3 * PROBE_LIMIT_MS },
  });
  const probes = new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  return {
    stop: async () => {
      worker.postMessage('stop');
      const result = await probes;
      await worker.terminate();
      return result;
    },
  };
}

async function main() {
  const stack = await startStack('drill-load');
  const receiver = await startReceiver();
  const client = apiClient(stack.api.baseUrl);
  try {
    const fixtures = await seed(client, receiver);
    const probe = startProbe(stack.api.baseUrl);
    const result = await autocannon({ url: stack.api.baseUrl, connections: CONNECTIONS, duration: SECONDS, requests: workload(fixtures) });
    const probes = await probe.stop();
    const health = await client.call('GET', '/health');

    const statuses = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
    const serverErrors = Object.entries(statuses).filter(([code]) => Number(code) >= 500).reduce((sum, [, count]) => sum + count, 0);
    const latencies = probes.map((p) => p.ms).sort((x, y) => x - y);
    const probeMs = (p) => (latencies.length ? percentile(latencies, p) : 0);
    const failedProbes = probes.filter((p) => p.error || p.status !== 200 || p.ms > PROBE_LIMIT_MS);
    const total = Object.values(statuses).reduce((sum, count) => sum + count, 0);

    console.log(`Load drill: ${result.duration} s, ${CONNECTIONS} connections, mixed workload of 5 requests
  requests         ${total} answered (${Math.round(total / result.duration)}/s), ${result.errors} errors, ${result.timeouts} timeouts
  statuses         ${formatCounts(statuses)}
  latency (ms)     p50 ${result.latency.p50}, p99 ${result.latency.p99}, max ${result.latency.max}
  /health probes   ${probes.length}, failed or over ${PROBE_LIMIT_MS} ms: ${failedProbes.length}; ms p50 ${probeMs(50).toFixed(1)}, p99 ${probeMs(99).toFixed(1)}, max ${latencies.at(-1)?.toFixed(1)}
  webhook          ${receiver.requests.length} deliveries received during the run`);

    const violations = [
      ...(serverErrors ? [`${serverErrors} responses with a 5xx status`] : []),
      ...(result.errors ? [`${result.errors} connection errors or timeouts`] : []),
      ...failedProbes.map((p) => `/health probe: ${p.error ?? p.status} after ${p.ms.toFixed(0)} ms`),
      ...(probes.length < SECONDS - 1 ? [`only ${probes.length} /health probes in ${SECONDS} s`] : []),
      ...(health.status === 200 ? [] : [`GET /health answered ${health.status} after the run`]),
    ];
    if (violations.length) {
      console.log(`\nVIOLATIONS (${violations.length}):\n  ${violations.join('\n  ')}`);
      process.exitCode = 1;
    } else {
      console.log('\nLoad drill passed.');
    }
  } finally {
    await client.close();
    await receiver.close();
    await stack.stop();
  }
}

await main();
