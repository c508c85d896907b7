// Benchmark of routing (a script, not a test): npm run bench:routing [-- options]
// Starts the built app on CPU 0 (the embedded engine in its own process, also on CPU 0, or MONGODB_URI) and, from
// this process on CPU 1:
// 1. the backlog: --backlog queued conversations (priorities mixed, written in bulk) and --agents offline agents with
//    room for them all; auto-assignment on; the agents come online through the API at once, and routing drains the
//    queue. Prints decisions per second (conversations assigned / seconds from the first agent online to the last
//    assignment) and the p50 / p99 of each conversation's wait from that moment to its assignedAt (target ≥ 500/s;
//    loads are counters: no count of the database per decision) and the database operations per decision, the
//    reactions to the assignments included (serverStatus's opcounters, taken once the consumers settled);
// 2. a team queue's first page and a page deep in it (GET /v1/teams/:id/queue?limit=50) for a team of --small and
//    one of --large queued conversations, --requests sequential requests each, interleaved: p50 per size and the
//    ratio large / small (target ≤ 1.5).
// Prints the figures with the machine's load (uptime) before and after. The run holds /tmp/parley-load.lock (flock).
// Options: --backlog 5000 --agents 50 --small 1000 --large 100000 --requests 200
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { rerunPinnedUnderLock } from '../harness/pinning.mjs';

rerunPinnedUnderLock(fileURLToPath(import.meta.url));

const { ObjectId } = await import('mongodb');
const { Api } = await import('../harness/api.mjs');
const { LatencyRecorder } = await import('../harness/stats.mjs');
const { startApp } = await import('./lib/app.mjs');
const { describeMachine, uptime } = await import('./lib/machine.mjs');
const { numericOptions } = await import('./lib/options.mjs');
const { connect, insertInBatches, registerCompany } = await import('./lib/seed.mjs');
const { settled } = await import('./lib/consumers.mjs');

const {
  backlog,
  agents: agentCount,
  small,
  large,
  requests,
} = numericOptions({ backlog: 5000, agents: 50, small: 1000, large: 100_000, requests: 200 });
const DRAIN_TIMEOUT_MS = 600_000;
const PRIORITIES = ['high', 'medium', 'low'];

const log = (line) => process.stderr.write(`[bench:routing ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const machine = describeMachine();
const loadBefore = uptime();
const { app, engine, base, databaseUri } = await startApp({ engineProcess: true });
const { client, db } = await connect(databaseUri);
try {
  const api = new Api(base);

  // 1. The backlog.
  const desk = await registerCompany(api, 'Routing');
  await api.json('PATCH', `/v1/agents/${desk.agentId}`, { token: desk.token, body: { status: 'offline' } });
  const agents = [];
  for (let i = 0; i < agentCount; i++) {
    const agent = await api.json('POST', '/v1/agents', {
      token: desk.token,
      body: { name: `Agent ${i}`, email: `agent-${i}-${Date.now()}@bench.example`, status: 'offline' },
    });
    await api.json('PATCH', `/v1/agents/${agent.id}`, { token: desk.token, body: { capacity: 100 } });
    agents.push(agent.id);
  }
  await queued(desk.companyId, null, backlog);
  await api.json('PATCH', '/v1/settings', {
    token: desk.token,
    body: { autoAssignment: { enabled: true, strategy: 'least_busy', maxConversationsPerAgent: 100 } },
  });
  log(`${backlog} queued conversations, ${agentCount} agents coming online`);
  const operationsBefore = await operations();
  const released = Date.now();
  await Promise.all(agents.map((id) => api.json('PATCH', `/v1/agents/${id}`, { token: desk.token, body: { status: 'online' } })));
  const waits = await drained(desk.companyId, released);
  const drainSeconds = waits.percentile(100) / 1000;
  // Every command the drain caused: the decisions, the relay, and each consumer reacting to the assignments.
  await settled(db);
  const operationsAfter = await operations();
  const perDecision = Object.entries(operationsAfter)
    .map(([kind, count]) => [kind, (count - operationsBefore[kind]) / backlog])
    .filter(([, count]) => count >= 0.01);

  // 2. Team queue pages at two sizes.
  const pages = await registerCompany(api, 'Queues');
  const team = async (name) => (await api.json('POST', '/v1/teams', { token: pages.token, body: { name, strategy: 'manual' } })).id;
  const [smallTeam, largeTeam] = [await team('Small'), await team('Large')];
  log(`seeding ${small} and ${large} queued conversations in two team queues`);
  await queued(pages.companyId, smallTeam, small);
  await queued(pages.companyId, largeTeam, large);
  const deepCursor = async (teamId) => {
    let cursor = null;
    for (let i = 0; i < 5; i++)
      cursor = (await api.json('GET', `/v1/teams/${teamId}/queue?limit=50${cursor ? `&cursor=${cursor}` : ''}`, { token: pages.token })).nextCursor;
    return cursor;
  };
  const cursors = { [smallTeam]: await deepCursor(smallTeam), [largeTeam]: await deepCursor(largeTeam) };
  const timings = { small: new LatencyRecorder(), large: new LatencyRecorder(), smallDeep: new LatencyRecorder(), largeDeep: new LatencyRecorder() };
  for (let i = 0; i < requests; i++) {
    for (const [name, teamId, cursor] of i % 2 === 0
      ? [
          ['small', smallTeam, null],
          ['large', largeTeam, null],
          ['smallDeep', smallTeam, cursors[smallTeam]],
          ['largeDeep', largeTeam, cursors[largeTeam]],
        ]
      : [
          ['large', largeTeam, null],
          ['small', smallTeam, null],
          ['largeDeep', largeTeam, cursors[largeTeam]],
          ['smallDeep', smallTeam, cursors[smallTeam]],
        ]) {
      const started = performance.now();
      // Api.call throws on any answer but a 2xx.
      await api.call('GET', `/v1/teams/${teamId}/queue?limit=50${cursor ? `&cursor=${cursor}` : ''}`, { token: pages.token });
      timings[name].add(performance.now() - started);
    }
  }
  const loadAfter = uptime();

  console.log('');
  console.log(`Routing: a backlog of ${backlog} queued conversations to ${agentCount} agents; team queue pages at ${small} and ${large}`);
  console.log(`machine: ${machine.cpus} vCPUs, ${machine.model}, Node.js ${machine.node}; engine in its own process on CPU 0`);
  console.log(`load before: ${loadBefore}`);
  console.log(`load after:  ${loadAfter}`);
  console.log(
    `backlog drained in ${drainSeconds.toFixed(1)} s: ${(backlog / drainSeconds).toFixed(0)} decisions/s (target ≥ 500); wait to assignment ` +
      `p50 ${waits.percentile(50).toFixed(0)} ms, p99 ${waits.percentile(99).toFixed(0)} ms`,
  );
  console.log(
    `database operations per decision, reactions included (serverStatus opcounters): ` +
      `${perDecision.map(([kind, count]) => `${kind} ${count.toFixed(2)}`).join(', ')}; ` +
      `${perDecision.reduce((sum, [, count]) => sum + count, 0).toFixed(1)} in all`,
  );
  const p50 = (name) => timings[name].percentile(50);
  console.log(
    `team queue first page p50: ${p50('small').toFixed(1)} ms at ${small}, ${p50('large').toFixed(1)} ms at ${large}: ratio ${(p50('large') / p50('small')).toFixed(2)} (target ≤ 1.5)`,
  );
  console.log(
    `team queue 6th page p50:   ${p50('smallDeep').toFixed(1)} ms at ${small}, ${p50('largeDeep').toFixed(1)} ms at ${large}: ratio ${(p50('largeDeep') / p50('smallDeep')).toFixed(2)}`,
  );
} finally {
  await client.close();
  await app.stop();
  await engine?.stop();
}

/** Writes `count` queued conversations of the company (in `teamId`'s queue), each with a contact of its own. */
async function queued(companyIdText, teamIdText, count) {
  const companyId = new ObjectId(companyIdText);
  const teamId = teamIdText ? new ObjectId(teamIdText) : null;
  const contactIds = Array.from({ length: count }, () => new ObjectId());
  const now = Date.now();
  await insertInBatches(db.collection('contacts'), count, (i) => ({
    _id: contactIds[i],
    companyId,
    name: `Waiting ${i}`,
    email: `waiting-${i}-${now}@bench.example`,
    tags: [],
    attributes: {},
    createdAt: new Date(now),
    updatedAt: new Date(now),
    __v: 0,
  }));
  await insertInBatches(db.collection('conversations'), count, (i) => {
    const queuedAt = new Date(now - (count - i) * 1000);
    return {
      _id: new ObjectId(),
      companyId,
      contactId: contactIds[i],
      contact: { name: `Waiting ${i}`, email: null, phone: null },
      channel: 'web',
      status: 'queued',
      priority: PRIORITIES[i % 3],
      assignedAgentId: null,
      assignedAt: null,
      assignedBy: null,
      tags: [],
      subject: null,
      lastMessageAt: null,
      lastMessage: null,
      lastActivityAt: queuedAt,
      inboundCount: 0,
      assigneeUnread: false,
      firstResponseAt: null,
      queuedAt,
      closedAt: null,
      closeReason: null,
      snoozedUntil: null,
      sleep: null,
      sla: null,
      csat: null,
      replyWindowExpiresAt: null,
      teamId,
      requiredSkills: [],
      queueTimeout: null,
      isOpen: true,
      revision: 0,
      createdAt: queuedAt,
      updatedAt: queuedAt,
      __v: 0,
    };
  });
}

/** The server's operation counters (what serverStatus counts: per statement for writes). */
async function operations() {
  return (await db.admin().serverStatus()).opcounters;
}

/** Waits until no conversation of the company is queued; each one's wait from `since` to its assignedAt. */
async function drained(companyIdText, since) {
  const companyId = new ObjectId(companyIdText);
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while ((await db.collection('conversations').countDocuments({ companyId, status: 'queued' })) > 0) {
    if (Date.now() > deadline) throw new Error('the backlog was not drained');
    await sleep(250);
  }
  const waits = new LatencyRecorder();
  for await (const row of db.collection('conversations').find({ companyId, status: 'human' }, { projection: { assignedAt: 1 } }))
    waits.add(row.assignedAt.getTime() - since);
  return waits;
}
