// Crash drill: the API is killed with SIGKILL in the middle of 2 000 inbound messages and restarted on the same
// standalone engine. Every CHAT_RECEIVED of a stored message must reach the surviving webhook at least once, signed,
// and nothing may reach the webhook deleted before the run. Exits 1 on a violation.
// Run: npm run drill -- crash   (or node drill/crash.mjs after nest build)
import { MongoClient, ObjectId } from 'mongodb';
import { freePort } from '../harness/children.mjs';
import { signatureValid, startReceiver } from '../harness/receivers.mjs';
import { apiClient } from './lib/client.mjs';
import { createApiKey, registerCompany } from './lib/fixtures.mjs';
import { API_ENV, startApi, startEngine } from './lib/processes.mjs';

const MESSAGES = 2000;
const IN_FLIGHT = 20;
const KILL_AFTER_ACKS = 1000;
const CONTACTS = 50;
// Deliveries have settled once every stored message has arrived and a short quiet period has caught duplicates, or
// after a quiet period longer than anything may come late: a killed worker's lane lease (2 × WEBHOOK_TIMEOUT_MS + 1 s),
// and the events the crash left pending, published again 30 s after their message (looked for every 5 s).
const QUIET_WHEN_COMPLETE_MS = 3000;
const QUIET_OTHERWISE_MS = 2 * Number(API_ENV.WEBHOOK_TIMEOUT_MS) + 1000 + 30_000 + 5000 + 5000;
const SETTLE_TIMEOUT_MS = 180_000;
const KEPT = '/kept';
const DELETED = '/deleted';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function createWebhook(client, apiKey, name, url) {
  const body = await client.expect(201, 'POST', '/api/external/webhooks', {
    apiKey,
    json: { name, url, events: ['CHAT_RECEIVED'], retryConfig: { maxRetries: 10, backoffMs: 200 } },
  });
  return body.data;
}

/**
 * Sends inbound messages `from..MESSAGES - 1` with IN_FLIGHT in flight until `stop()` holds; answers the index of the
 * first message not sent. A request that gets no answer (the API died under it) is counted as lost: that message may
 * or may not be stored. `afterEach` runs after every request.
 */
async function send(client, apiKey, state, { from, stop = () => false, afterEach = () => {} }) {
  let next = from;
  const worker = async () => {
    while (next < MESSAGES && !stop()) {
      const index = next++;
      const contact = index % CONTACTS;
      try {
        const response = await client.call('POST', '/api/external/messages', {
          apiKey,
          json: { from: { phone: `+1415555${String(2000 + contact)}`, name: `Crash contact ${contact}` }, text: `crash drill message ${index}` },
        });
        if (response.status === 201) state.acked.add(response.json.data.message.id);
        else state.refused.push(`message ${index}: ${response.status} ${response.text.slice(0, 200)}`);
      } catch {
        state.lost += 1;
      }
      afterEach();
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return next;
}

/** Waits for deliveries to settle (see QUIET_*); false when SETTLE_TIMEOUT_MS passed first. */
async function settle(receiver, db, companyId) {
  const deadline = Date.now() + SETTLE_TIMEOUT_MS;
  let count = -1;
  let lastChange = Date.now();
  while (Date.now() < deadline) {
    await sleep(1000);
    if (receiver.requests.length !== count) {
      count = receiver.requests.length;
      lastChange = Date.now();
      continue;
    }
    const quiet = Date.now() - lastChange;
    if (quiet >= QUIET_OTHERWISE_MS) return true;
    if (quiet >= QUIET_WHEN_COMPLETE_MS) {
      const delivered = deliveredMessageIds(receiver.to(KEPT));
      if ((await storedInbound(db, companyId)).every((id) => delivered.has(id))) return true;
    }
  }
  return false;
}

async function storedInbound(db, companyId) {
  const messages = await db.collection('messages').find({ companyId: new ObjectId(companyId), direction: 'inbound' }, { projection: { _id: 1 } }).toArray();
  return messages.map((message) => message._id.toHexString());
}

/** Deliveries in the outbox per status, for each webhook. */
async function outboxOf(db, companyId, webhookIds) {
  const outbox = {};
  for (const [name, id] of Object.entries(webhookIds)) {
    const match = { companyId: new ObjectId(companyId), webhookId: new ObjectId(id.slice('wh_'.length)) };
    const rows = await db.collection('webhook_deliveries').aggregate([{ $match: match }, { $group: { _id: '$status', n: { $sum: 1 } } }]).toArray();
    outbox[name] = Object.fromEntries(rows.map((row) => [row._id, row.n]));
  }
  return outbox;
}

/** Message id → how many CHAT_RECEIVED requests carried it. */
function deliveredMessageIds(requests) {
  const seen = new Map();
  for (const request of requests) {
    const event = JSON.parse(request.body);
    const id = event.type === 'CHAT_RECEIVED' ? event.data.message.id : undefined;
    if (id) seen.set(id, (seen.get(id) ?? 0) + 1);
  }
  return seen;
}

/** The engine, an API process on it, a receiver, and a company whose second webhook is deleted before the run. */
async function prepare() {
  const engine = await startEngine();
  const mongodbUri = `${engine.uri}/drill`;
  const mongo = await MongoClient.connect(mongodbUri);
  const port = await freePort();
  const receiver = await startReceiver();
  const api = await startApi({ port, mongodbUri });
  const client = apiClient(api.baseUrl, { connections: IN_FLIGHT });
  const company = await registerCompany(client, 'Crash Drill Co');
  const { key } = await createApiKey(client, company, ['messages:write', 'webhooks:manage']);
  const kept = await createWebhook(client, key, 'kept', receiver.url(KEPT));
  const deleted = await createWebhook(client, key, 'deleted', receiver.url(DELETED));
  await client.expect(200, 'DELETE', `/api/external/webhooks/${deleted.id}`, { apiKey: key });
  return { engine, mongodbUri, mongo, db: mongo.db(), port, receiver, api, client, company, key, kept, deleted };
}

/** Sends every message, killing the API (SIGKILL) after KILL_AFTER_ACKS acknowledgements and restarting it. */
async function sendThroughCrash(run) {
  const state = { acked: new Set(), refused: [], lost: 0 };
  let killing;
  const resumeAt = await send(run.client, run.key, state, {
    from: 0,
    stop: () => killing !== undefined,
    afterEach: () => {
      if (!killing && state.acked.size >= KILL_AFTER_ACKS) killing = run.api.kill();
    },
  });
  await killing;
  state.ackedBeforeKill = state.acked.size;
  console.log(`killed the API (SIGKILL) after ${state.ackedBeforeKill} acknowledged, ${run.receiver.to(KEPT).length} deliveries received so far`);
  run.api = await startApi({ port: run.port, mongodbUri: run.mongodbUri });
  console.log(`restarted the API on the same engine; sending messages ${resumeAt}..${MESSAGES - 1}`);
  await send(run.client, run.key, state, { from: resumeAt });
  return state;
}

async function verdict(run, state) {
  const { db, company, receiver, kept, deleted } = run;
  const stored = await storedInbound(db, company.companyId);
  const storedSet = new Set(stored);
  const outbox = await outboxOf(db, company.companyId, { kept: kept.id, deleted: deleted.id });
  const requests = receiver.to(KEPT);
  const delivered = deliveredMessageIds(requests);
  const badSignatures = requests.filter((request) => !signatureValid(kept.secret, request)).map((request) => request.headers['webhook-id']);
  const missing = stored.filter((id) => !delivered.has(id));
  const ackedNotStored = [...state.acked].filter((id) => !storedSet.has(id));
  const phantom = [...delivered.keys()].filter((id) => !storedSet.has(id));
  const duplicates = [...delivered.values()].reduce((sum, n) => sum + n - 1, 0);

  console.log(`  sent                     ${MESSAGES} (lost in the crash, no answer: ${state.lost}; refused: ${state.refused.length})
  acknowledged (201)       ${state.acked.size} (${state.ackedBeforeKill} before the kill)
  stored inbound messages  ${stored.length}
  delivered (unique)       ${delivered.size} of ${requests.length} requests, duplicates ${duplicates}
  missing                  ${missing.length}
  acknowledged not stored  ${ackedNotStored.length}
  delivered, not stored    ${phantom.length}
  bad signatures           ${badSignatures.length}
  deleted-webhook hits     ${receiver.to(DELETED).length}
  outbox                   kept ${JSON.stringify(outbox.kept)}, deleted ${JSON.stringify(outbox.deleted)}`);

  const kinds = [
    ['inbound requests refused', state.refused],
    ['stored messages without a CHAT_RECEIVED', missing],
    ['acknowledged messages not stored', ackedNotStored],
    ['CHAT_RECEIVED for messages not stored', phantom],
    ['signatures that do not verify (webhook-id)', badSignatures],
    ['requests to the deleted webhook', receiver.to(DELETED).map((request) => request.headers['webhook-id'])],
    ['statuses of deliveries left in the outbox of the deleted webhook', Object.keys(outbox.deleted)],
  ];
  return kinds.filter(([, items]) => items.length).map(([what, items]) => `${items.length} ${what}, e.g. ${items.slice(0, 3).join('; ')}`);
}

async function main() {
  const run = await prepare();
  const started = Date.now();
  const state = await sendThroughCrash(run);
  const settled = await settle(run.receiver, run.db, run.company.companyId);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`\nCrash drill (${seconds} s, ${settled ? 'settled' : `NOT settled within ${SETTLE_TIMEOUT_MS / 1000} s`})`);
  const violations = await verdict(run, state);
  await run.client.close();
  await run.mongo.close();
  await run.api.stop();
  await run.engine.stop();
  await run.receiver.close();
  if (violations.length) {
    console.log(`\nVIOLATIONS:\n  ${violations.join('\n  ')}`);
    process.exit(1);
  }
  console.log('\nCrash drill passed.');
}

await main();
