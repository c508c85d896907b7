// Crash drill: a mixed workload from several clients on two API processes (inbound messages that trigger a flow,
// replies, hand-offs with auto-assignment on, assignments, closes, manual flow runs, delivery reports on the replies,
// private notes, snoozes that fall due within seconds, so while processes die),
// with `kill -9` of an API process at three random moments, each restarted on the same standalone engine, and
// `kill -9` of the engine itself (on a data directory) at another, restarted on the same directory and port. Once
// everything has settled: every acknowledged change has exactly its events in the log, once; the subscribed webhook
// received every logged event with one webhook-id per event; no flow ran twice for one event; no agent went over
// capacity; every snooze woke exactly once (one conversation.unsnoozed), never before its time. Every inbound
// message carries an externalId, and those that got no answer are posted again after the restarts, as a connector
// would: no externalId is stored twice, and none sent (or acknowledged) is missing. SLA deadlines fall due throughout
// (conversations on an SLA channel with targets of seconds): once the last is past and everything settled, each
// missed target has exactly one `sla.breached` (none for a target met in time), and no warning or breach is logged
// twice. Exits 1 on a violation.
// Run: npm run drill -- crash   (or node drill/crash.mjs after nest build)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient, ObjectId } from 'mongodb';
import { freePort } from '../harness/children.mjs';
import { startReceiver } from '../harness/receivers.mjs';
import { judge, judgeSla } from './crash/verdict.mjs';
import { retryUnanswered, runWorkload, SLA_CHANNEL } from './crash/workload.mjs';
import { apiClient } from './lib/client.mjs';
import { createApiKey, registerCompany } from './lib/fixtures.mjs';
import { startApi, startEngine } from './lib/processes.mjs';

const OPERATIONS = 1500;
const CLIENTS = 12;
const KILLS = 3;
const ENGINE_KILLS = 1;
const AUTO_AGENTS = 3;
const CAPACITY = 4;
const SETTLE_TIMEOUT_MS = 180_000;
const EVENTS = [
  'CONVERSATION_CREATED', 'CONVERSATION_ASSIGNED', 'CONVERSATION_QUEUED', 'CONVERSATION_CLOSED', 'CONVERSATION_SNOOZED', 'CONVERSATION_UNSNOOZED',
  'CONVERSATION_PRIORITY_CHANGED', 'NOTE_ADDED', 'CHAT_RECEIVED', 'CHAT_SENT', 'CHAT_STATUS_CHANGED', 'FLOW_EXECUTED', 'SLA_WARNING', 'SLA_BREACHED',
];
/** The drill's SLA policy (on SLA_CHANNEL): deadlines of seconds, so that many fall due while processes are killed. */
const SLA_POLICY = { name: 'Drill SLA', conditions: { channels: [SLA_CHANNEL] }, firstResponseSeconds: 6, resolutionSeconds: 15, warnBeforeSeconds: 3 };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The engine, two API processes, a receiver, and a company with agents, flows, auto-assignment and webhooks. */
async function prepare() {
  const dataDir = mkdtempSync(join(tmpdir(), 'parley-crash-engine-'));
  const enginePort = await freePort();
  const engine = await startEngine({ dataDir, port: enginePort });
  const mongodbUri = `${engine.uri}/drill`;
  const mongo = await MongoClient.connect(mongodbUri);
  const receiver = await startReceiver();
  const apis = [];
  for (let index = 0; index < 2; index += 1) {
    const port = await freePort();
    const process = await startApi({ port, mongodbUri });
    apis.push({ port, process, client: apiClient(process.baseUrl, { connections: CLIENTS }), up: true });
  }
  const { client } = apis[0];
  const company = await registerCompany(client, 'Crash Drill Co');
  const { key } = await createApiKey(client, company, ['messages:write', 'webhooks:manage']);
  const webhook = (name) => client.expect(201, 'POST', '/api/external/webhooks', { apiKey: key, json: { name, url: receiver.url(`/${name}`), events: EVENTS, retryConfig: { maxRetries: 10, backoffMs: 200 } } });
  const kept = (await webhook('kept')).data;
  const deleted = (await webhook('deleted')).data;
  await client.expect(200, 'DELETE', `/api/external/webhooks/${deleted.id}`, { apiKey: key });

  const agent = async (name, status) =>
    (await client.expect(201, 'POST', '/v1/agents', { token: company.token, json: { name, email: `${name}-${Date.now()}@drill.example`, role: 'agent', status } })).id;
  const autoAgents = [];
  for (let index = 0; index < AUTO_AGENTS; index += 1) autoAgents.push(await agent(`auto${index}`, 'online'));
  const manualAgentId = await agent('manual', 'offline');
  await client.expect(200, 'PATCH', `/v1/agents/${company.agentId}`, { token: company.token, json: { status: 'offline' } });
  await client.expect(200, 'PATCH', '/v1/settings', { token: company.token, json: { autoAssignment: { enabled: true, strategy: 'least_busy', maxConversationsPerAgent: CAPACITY } } });
  await client.expect(201, 'POST', '/v1/flows', {
    token: company.token,
    json: { name: 'Help desk', trigger: { type: 'inbound_message', keywords: ['help'] }, steps: [{ type: 'send_message', text: 'On it!' }, { type: 'add_tags', tags: ['help'] }, { type: 'handoff' }] },
  });
  const manualFlow = await client.expect(201, 'POST', '/v1/flows', { token: company.token, json: { name: 'Escalate', steps: [{ type: 'set_priority', priority: 'high' }, { type: 'add_tags', tags: ['escalated'] }] } });
  await client.expect(201, 'POST', '/v1/sla-policies', { token: company.token, json: SLA_POLICY });
  return { engine, dataDir, enginePort, mongodbUri, mongo, db: mongo.db(), receiver, apis, company, key, kept, deleted, autoAgents, manualAgentId, manualFlowId: manualFlow.id };
}

/** Kills a random API process (SIGKILL) and starts it again on its port; requests go to the other one meanwhile. */
async function crash(run, kills) {
  const api = run.apis[Math.floor(Math.random() * run.apis.length)];
  if (!api.up) return;
  api.up = false;
  await api.process.kill();
  kills.push(`API on port ${api.port} at ${new Date().toISOString()}`);
  api.process = await restartApi(run, api.port);
  api.up = true;
}

/**
 * Starts an API process again as a supervisor would: one that exits while starting (the engine's kill can cut its
 * connection while it builds its indexes) is started anew, up to three times.
 */
async function restartApi(run, port) {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startApi({ port, mongodbUri: run.mongodbUri });
    } catch (failure) {
      if (attempt === 3) throw failure;
      console.log(`  API on port ${port} did not start (attempt ${attempt}), starting it again: ${failure.message.split('\n')[0]}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/** Kills the engine (SIGKILL) and starts it again on its data directory and port; the API processes reconnect. */
async function crashEngine(run, kills) {
  await run.engine.kill();
  kills.push(`engine at ${new Date().toISOString()}`);
  run.engine = await startEngine({ dataDir: run.dataDir, port: run.enginePort });
}

/** Samples every auto agent's open human conversations while the workload runs; answers the highest per agent. */
function watchCapacity(run) {
  const highest = new Map();
  let watching = true;
  const done = (async () => {
    while (watching) {
      try {
        const rows = await run.db.collection('conversations').aggregate([
          { $match: { companyId: new ObjectId(run.company.companyId), status: 'human' } },
          { $group: { _id: '$assignedAgentId', open: { $sum: 1 } } },
        ]).toArray();
        for (const row of rows) highest.set(String(row._id), Math.max(highest.get(String(row._id)) ?? 0, row.open));
      } catch {
        // the engine is being restarted: the next sample reads again
      }
      await sleep(250);
    }
  })();
  return { highest, stop: async () => ((watching = false), await done) };
}

/**
 * Settled: no record carries an unlogged event, every consumer has read its log, no delivery is pending, and every
 * snooze has woken and every timer (snoozes', SLA deadlines') is gone: none left due, none held by a killed process
 * until its lease runs out (the last ones fall due a few seconds after the workload ends).
 */
async function settle(db, companyId) {
  const company = new ObjectId(companyId);
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  while (Date.now() < deadline) {
    await sleep(1000);
    const pending = await Promise.all(['conversations', 'messages', 'flow_executions'].map((name) => db.collection(name).countDocuments({ companyId: company, 'pendingEvents.0': { $exists: true } })));
    const lanes = await db.collection('event_consumers').find({ companyId: company }).toArray();
    const deliveries = await db.collection('webhook_deliveries').countDocuments({ companyId: company, status: 'pending' });
    const running = await db.collection('flow_executions').countDocuments({ companyId: company, status: 'running' });
    const asleep = await db.collection('conversations').countDocuments({ companyId: company, snoozedUntil: { $ne: null } });
    const timers = await db.collection('timers').countDocuments({ companyId: company });
    const quiet = deliveries === 0 && running === 0 && asleep === 0 && timers === 0;
    if (pending.every((n) => n === 0) && lanes.every((lane) => lane.position >= lane.head && !lane.leaseOwner) && quiet) return true;
  }
  return false;
}

async function main() {
  const run = await prepare();
  const started = Date.now();
  const killAt = new Set(Array.from({ length: KILLS }, (_, index) => Math.round(OPERATIONS * (0.15 + 0.25 * index + Math.random() * 0.2))));
  // The engine between the API kills, at none of their moments.
  const engineKillAt = new Set(Array.from({ length: ENGINE_KILLS }, () => Math.round(OPERATIONS * (0.3 + Math.random() * 0.4))).filter((n) => !killAt.has(n)));
  const kills = [];
  const crashes = [];
  const capacity = watchCapacity(run);
  const record = await runWorkload({
    api: () => run.apis.filter((api) => api.up).sort(() => Math.random() - 0.5)[0]?.client ?? null,
    company: run.company,
    key: run.key,
    manualAgentId: run.manualAgentId,
    manualFlowId: run.manualFlowId,
    total: OPERATIONS,
    clients: CLIENTS,
    onOperation: async (done) => {
      if (killAt.delete(done)) crashes.push(crash(run, kills));
      if (engineKillAt.delete(done)) crashes.push(crashEngine(run, kills));
    },
  });
  await Promise.all(crashes);
  const retried = await retryUnanswered({ api: () => run.apis[0].client, key: run.key, record });
  // Every SLA deadline of the run past (the last conversation's resolution), then everything settled.
  await sleep(SLA_POLICY.resolutionSeconds * 1000 + 2000);
  const settled = await settle(run.db, run.company.companyId);
  await capacity.stop();
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const { counts, violations } = await judge({ ...run, companyId: run.company.companyId, record, agents: run.autoAgents, capacity: CAPACITY, maxLoadSeen: capacity.highest });
  const sla = await judgeSla({ db: run.db, companyId: run.company.companyId, channel: SLA_CHANNEL, policy: SLA_POLICY });
  violations.push(...sla.violations);

  console.log(`\nCrash drill (${seconds} s, ${settled ? 'settled' : `NOT settled within ${SETTLE_TIMEOUT_MS / 1000} s`})
  kills (SIGKILL)          ${kills.length}: ${kills.join('; ')}
  operations sent          ${JSON.stringify(record.sent)}
  acknowledged             ${record.acked.length}; refused (4xx, e.g. a conversation closed meanwhile) ${JSON.stringify(record.refused)}
  lost (no answer)         ${JSON.stringify(record.lost)}
  inbound retried          ${record.unanswered.length} after the restarts: ${retried.stored} stored (201), ${retried.duplicates} already stored (200 duplicate), ${retried.refused} refused, ${retried.unanswered} never answered
  inbound                  ${counts.inbound}
  logged events            ${JSON.stringify(counts.logged)}
  webhook                  ${counts.deliveries}
  flows                    ${counts.flows}
  capacity                 ${counts.capacity}
  snoozes                  ${counts.snoozes}
  SLA deadlines            ${sla.counts}`);
  for (const api of run.apis) {
    await api.client.close();
    await api.process.stop();
  }
  await run.mongo.close();
  await run.engine.stop();
  rmSync(run.dataDir, { recursive: true, force: true });
  await run.receiver.close();
  if (!settled) violations.push('the system did not settle');
  if (retried.unanswered > 0) violations.push(`${retried.unanswered} inbound messages never answered after the restarts`);
  if (violations.length) {
    console.log(`\nVIOLATIONS:\n  ${violations.join('\n  ')}`);
    process.exit(1);
  }
  console.log('\nCrash drill passed.');
}

await main();
