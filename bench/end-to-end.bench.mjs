// End-to-end sustained throughput (issue 44; a script that prints figures, not a test): npm run bench:e2e [-- options]
// One company with everything on: 3 webhooks (every event) to healthy receivers on 127.0.0.1, an SLA policy, 20 active
// flows whose keywords no message has, 50 automation rules that match nothing, auto-assignment to 20 online agents (a
// 21st flow hands off the share of conversations whose first message asks for a human, so routing runs), and the
// welcome auto-reply. Inbound messages are posted at a fixed rate (open loop: on a clock, whatever the answers) for
// --duration seconds, from --contacts contacts in turn; then the rate is raised by --step, until a step fails. Every
// --sample-ms, each lane's lag is sampled from the database: the relay (the oldest event staged and not yet in the
// log), each consumer of the log (the age of the first event it has not handled) and, at each receiver, each delivery's
// delay after its event. A step passes when every message was answered 201, every lane's lag p99 is under --max-lag-p99
// s, no consumer's backlog grew over the step's second half, and, --settle-s after the posting stopped, everything was
// handled and delivered. It prints one line per step and then `end to end: N messages/s fully processed (lag p99 X s)`:
// the highest passing rate. The app on CPU 0, the engine on CPU 1 (--engine-cpu 0: both on the app's core, as `npm run
// bench`), the poster and the receivers on CPU 1. The whole run holds /tmp/parley-load.lock (flock), like `npm run
// bench`.
//
// The rules (--rules, on `message.received`) are set up by EXTRAS below, each an async function of (api, company) run
// once before the first step; their consumer is sampled like every consumer of the log.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rerunPinnedUnderLock } from '../harness/pinning.mjs';

rerunPinnedUnderLock(fileURLToPath(import.meta.url));

const { Pool } = await import('undici');
const { ObjectId } = await import('mongodb');
const { Api } = await import('../harness/api.mjs');
const { Receiver } = await import('../harness/receivers.mjs');
const { percentile } = await import('../harness/stats.mjs');
const { startApp } = await import('./lib/app.mjs');
const { describeMachine, foreignLoad } = await import('./lib/machine.mjs');
const { connect, phone, registerCompany } = await import('./lib/seed.mjs');
// Every event a webhook can take, by its dotted name (the built app's catalogue: npm run bench:e2e builds first).
const { WEBHOOK_EVENT_NAMES } = await import('../dist/webhooks/webhook-events.js');
const EVERY_EVENT = WEBHOOK_EVENT_NAMES.filter((name) => name.includes('.'));

const { values: options } = parseArgs({
  options: {
    rate: { type: 'string', default: '100' },
    step: { type: 'string', default: '1.25' },
    'max-rate': { type: 'string', default: '5000' },
    duration: { type: 'string', default: '60' },
    contacts: { type: 'string', default: '2000' },
    agents: { type: 'string', default: '20' },
    flows: { type: 'string', default: '20' },
    rules: { type: 'string', default: '50' },
    webhooks: { type: 'string', default: '3' },
    'handoff-share': { type: 'string', default: '0.1' },
    'max-lag-p99': { type: 'string', default: '2' },
    'sample-ms': { type: 'string', default: '250' },
    'settle-s': { type: 'string', default: '10' },
    'engine-cpu': { type: 'string', default: '1' },
  },
});
const rate0 = Number(options.rate);
const stepFactor = Number(options.step);
const maxRate = Number(options['max-rate']);
const duration = Number(options.duration);
const contacts = Number(options.contacts);
const rules = Number(options.rules);
const handoffShare = Number(options['handoff-share']);
const maxLagP99Ms = Number(options['max-lag-p99']) * 1000;
const sampleMs = Number(options['sample-ms']);
const settleMs = Number(options['settle-s']) * 1000;

/** Set-up run once before the first step: the automation rules, whose conditions match no conversation. */
const EXTRAS = [
  async (api, company) => {
    for (let i = 0; i < rules; i++) {
      await api.json('POST', '/v1/automation-rules', {
        token: company.token,
        body: {
          name: `Never ${i}`,
          trigger: { event: 'message.received' },
          conditions: { field: 'tags', op: 'eq', value: `never-${i}` },
          actions: [{ type: 'add_tags', tags: [`never-${i}`] }],
        },
      });
    }
  },
];

const log = (line) => process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const stack = await startApp({ engineProcess: true, engineCpu: options['engine-cpu'] });
const { app, engine, base, databaseUri } = stack;
const receivers = [];
const { client, db } = await connect(databaseUri);
try {
  const api = new Api(base);
  const company = await setUp(api);
  const companyId = new ObjectId(company.companyId);
  const otherLoad = await foreignLoad();
  let best = null;
  let contact = 0;
  for (let rate = rate0; rate <= maxRate; rate = Math.ceil(rate * stepFactor)) {
    const step = await runStep(company, companyId, rate, () => contact++ % contacts);
    log(
      `${rate} messages/s: ${step.pass ? 'PASS' : `FAIL (${step.failures.join('; ')})`}; answered p99 ${step.answerP99.toFixed(0)} ms; lag p99 ` +
        Object.entries(step.lagP99)
          .map(([lane, ms]) => `${lane} ${(ms / 1000).toFixed(2)} s`)
          .join(', '),
    );
    if (!step.pass) break;
    best = { rate, lagP99: Math.max(...Object.values(step.lagP99)) };
  }
  const machine = describeMachine();
  console.log(
    `\n${machine.cpus} CPUs (${machine.model}), Node.js ${machine.node}; app on CPU 0, engine on CPU ${options['engine-cpu']}; ` +
      `other load before the run ${(100 * otherLoad).toFixed(0)}%; steps of ${duration} s from ${rate0} messages/s, x${stepFactor}`,
  );
  console.log(
    best
      ? `end to end: ${best.rate} messages/s fully processed (lag p99 ${(best.lagP99 / 1000).toFixed(1)} s)`
      : `end to end: not even ${rate0} messages/s fully processed`,
  );
} finally {
  await client.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await app.stop();
  await engine?.stop();
}

/** The company with everything on (see the note at the top). */
async function setUp(api) {
  const company = await registerCompany(api, 'EndToEnd');
  const as = { token: company.token };
  // The admin goes offline: the --agents agents take the conversations.
  await api.json('PATCH', `/v1/agents/${company.agentId}`, { ...as, body: { status: 'offline' } });
  for (let i = 0; i < Number(options.agents); i++) {
    await api.json('POST', '/v1/agents', {
      ...as,
      body: {
        name: `Agent ${i}`,
        email: `agent-${i}-${Date.now()}@bench.example`,
        role: 'agent',
        status: 'online',
        password: 'a good bench password',
      },
    });
  }
  await api.json('PATCH', '/v1/settings', {
    ...as,
    body: {
      autoAssignment: { enabled: true, strategy: 'round_robin', maxConversationsPerAgent: 1000 },
      welcomeMessage: 'Welcome! We answer within the hour.',
    },
  });
  await api.json('POST', '/v1/sla-policies', { ...as, body: { name: 'Everyone', firstResponseSeconds: 3600, resolutionSeconds: 86_400 } });
  for (let i = 0; i < Number(options.flows); i++) {
    const trigger = { type: 'inbound_message', keywords: [`nomatch${i}`] };
    await api.json('POST', '/v1/flows', { ...as, body: { name: `Quiet ${i}`, trigger, steps: [{ type: 'send_message', text: 'Never sent.' }] } });
  }
  await api.json('POST', '/v1/flows', {
    ...as,
    body: { name: 'Hand off', trigger: { type: 'inbound_message', keywords: ['human'] }, steps: [{ type: 'handoff' }] },
  });
  for (let i = 0; i < Number(options.webhooks); i++) {
    const receiver = await new Receiver(`healthy-${i}`).listen();
    receivers.push(receiver);
    receiver.secret = (
      await api.json('POST', '/v1/webhooks', { ...as, body: { name: receiver.name, url: receiver.url, events: EVERY_EVENT } })
    ).secret;
  }
  for (const extra of EXTRAS) await extra(api, company);
  log(`set up: ${options.agents} agents, ${options.flows} + 1 flows, ${options.webhooks} webhooks, an SLA policy, auto-assignment, a welcome`);
  return company;
}

/** Posts at `rate` for `duration` s while sampling the lanes, then waits for everything to be handled. */
async function runStep(company, companyId, rate, nextContact) {
  for (const receiver of receivers) receiver.reset();
  const pool = new Pool(base, { connections: 64, pipelining: 1 });
  const headers = { 'x-api-key': company.apiKey, 'content-type': 'application/json' };
  const answers = [];
  const failures = [];
  let sent = 0;
  let errors = 0;
  const samples = {};
  const backlogs = {};
  const record = (lane, lagMs, backlog) => {
    (samples[lane] ??= []).push(lagMs);
    (backlogs[lane] ??= []).push(backlog);
  };
  const started = performance.now();
  const inFlight = new Set();
  // Open loop: each tick sends what the clock says is due by now, whatever the answers.
  const ticker = setInterval(() => {
    const due = Math.min(Math.floor(((performance.now() - started) / 1000) * rate), rate * duration);
    for (; sent < due; sent++) {
      const text = Math.random() < handoffShare ? 'I want a human, please' : 'Is my order on its way?';
      const body = JSON.stringify({ from: { phone: phone(555, nextContact()) }, text, channel: 'whatsapp' });
      const at = performance.now();
      const request = pool
        .request({ method: 'POST', path: '/api/external/messages', headers, body })
        .then(async (response) => {
          await response.body.dump();
          if (response.statusCode === 201) answers.push(performance.now() - at);
          else errors++;
        })
        .catch(() => errors++)
        .finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
  }, 5);
  const sampler = setInterval(() => sample(companyId, record).catch((error) => failures.push(`sampling: ${error.message}`)), sampleMs);
  await new Promise((resolve) => setTimeout(resolve, duration * 1000));
  clearInterval(ticker);
  clearInterval(sampler);
  await Promise.all(inFlight);
  await pool.close();

  // Everything handled and delivered within --settle-s of the end.
  const deadline = Date.now() + settleMs;
  let left = await outstanding(companyId);
  while (Date.now() < deadline && left.length > 0) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    left = await outstanding(companyId);
  }

  const lagP99 = Object.fromEntries(Object.entries(samples).map(([lane, values]) => [lane, percentile(values, 99)]));
  for (const receiver of receivers) {
    const delays = [...receiver.deliveries.values()].map((delivery) => delivery.latencyMs);
    if (delays.length) lagP99[`webhook ${receiver.name}`] = percentile(delays, 99);
    if (receiver.badSignatures) failures.push(`${receiver.name}: ${receiver.badSignatures} bad signatures`);
  }
  if (errors) failures.push(`${errors} of ${sent} messages not answered 201`);
  for (const [lane, ms] of Object.entries(lagP99)) if (ms >= maxLagP99Ms) failures.push(`${lane} lag p99 ${(ms / 1000).toFixed(2)} s`);
  for (const [lane, series] of Object.entries(backlogs)) {
    const half = series.slice(Math.floor(series.length / 2));
    // Growing: the second half ends well above where it started (more than a second's worth of messages).
    if (half.length > 1 && half.at(-1) - half[0] > rate) failures.push(`${lane} backlog grew from ${half[0]} to ${half.at(-1)}`);
  }
  if (left.length) failures.push(`${settleMs / 1000} s after the posting: ${left.join(', ')}`);
  if (receivers.some((receiver) => receiver.deliveries.size === 0)) failures.push('a receiver got nothing');
  return { pass: failures.length === 0, failures, lagP99, answerP99: answers.length ? percentile(answers, 99) : NaN };
}

/**
 * One sample of every lane's lag and backlog: the relay (staged events not in the log yet, by the oldest), and each
 * consumer of the log (the events after its position up to its head, by the age of the first).
 */
async function sample(companyId, record) {
  const now = Date.now();
  const staged = await db
    .collection('messages')
    .find({ companyId, 'pendingEvents.occurredAt': { $exists: true } }, { projection: { 'pendingEvents.occurredAt': 1 } })
    .sort({ 'pendingEvents.occurredAt': 1 })
    .limit(1)
    .toArray();
  const oldestStaged = staged[0]?.pendingEvents?.[0]?.occurredAt;
  record('relay', oldestStaged ? now - oldestStaged.getTime() : 0, staged.length);
  // A lane's `head` is how far the log holds events of the types its consumer reads (EventConsumers.markLogged).
  for (const lane of await db.collection('event_consumers').find({ companyId }).toArray()) {
    const next =
      lane.position < lane.head
        ? await db.collection('events').findOne({ companyId, sequence: lane.position + 1 }, { projection: { occurredAt: 1 } })
        : null;
    record(lane.consumer, next ? now - next.occurredAt.getTime() : 0, lane.head - lane.position);
  }
}

/** What is still to be handled (empty when nothing is): staged events, consumers behind the log, pending deliveries. */
async function outstanding(companyId) {
  const lanes = await db.collection('event_consumers').find({ companyId }).toArray();
  const staged = await db.collection('messages').countDocuments({ companyId, 'pendingEvents.occurredAt': { $exists: true } });
  const pending = await pendingDeliveries(companyId);
  return [
    ...(staged ? [`${staged} messages with staged events`] : []),
    ...lanes.filter((lane) => lane.position < lane.head).map((lane) => `${lane.consumer} at ${lane.position} of ${lane.head}`),
    ...(pending ? [`${pending} webhook deliveries pending`] : []),
  ];
}

function pendingDeliveries(companyId) {
  return db.collection('webhook_deliveries').countDocuments({ companyId, status: 'pending' });
}
