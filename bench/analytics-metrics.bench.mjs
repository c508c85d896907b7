// Benchmark of GET /v1/analytics/metrics (a script, not a test): the whole application over HTTP on the embedded
// engine, a company in Europe/Paris with 100 000 messages, 10 000 conversations and 5 000 flow runs inside a 90-day
// range (2025-01-01..2025-03-31, with the change to summer time on 30 March), answered by day. Noise the range must
// skip through its indexes: 20 000 of the company's messages before the range and 20 000 of another company inside it.
// Outbound messages carry delivery receipts (a quarter each sent, delivered, read and failed, reached seconds to a
// minute after the send), so the delivered, read and failed figures have data to skip through and count.
// The answer is checked against the counts seeded, then timed; the dashboard is timed too, on the same data.
// The agents report (GET /v1/analytics/agents) is timed on a third company with 100 000 conversations over the same
// 90 days, spread over 20 agents (assigned, two in three closed, most answered, some with an SLA breach or a rating)
// and 100 000 agent messages, its per-agent sums checked against the seed.
// Run: npm run bench:analytics   (builds, then runs this file against dist/ with --expose-gc)
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { getConnectionToken } from '@nestjs/mongoose';
import mongoose from 'mongoose';
import { AppModule } from '../dist/app.module.js';
import { configureApp } from '../dist/app.setup.js';
import { insertInBatches } from './lib/seed.mjs';

const MESSAGES = 100_000;
const CONVERSATIONS = 10_000;
const FLOW_RUNS = 5_000;
const NOISE = 20_000;
const REPORT_CONVERSATIONS = 100_000;
const REPORT_AGENTS = 20;
const WARMUP = 3;
const RUNS = 20;
const RANGE = { startDate: '2025-01-01', endDate: '2025-03-31' };
// Local midnight in Paris of 2025-01-01 (UTC+1) and of 2025-04-01 (UTC+2, after the change).
const START = Date.parse('2024-12-31T23:00:00Z');
const END = Date.parse('2025-03-31T22:00:00Z');
const { ObjectId } = mongoose.Types;

const app = await NestFactory.create(
  AppModule.forRoot({ NODE_ENV: 'test', LOG_LEVEL: 'silent', DEMO_SEED: 'false', THROTTLE_LIMIT: '1000000' }),
  { logger: false, bodyParser: false },
);
configureApp(app);
await app.listen(0, '127.0.0.1');
const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;

async function call(method, path, token, body) {
  const response = await fetch(base + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

async function register(name) {
  const password = 'correct horse battery staple';
  const email = `${name.toLowerCase()}-${Date.now()}@bench.example`;
  const { accessToken, company } = await call('POST', '/v1/auth/register', undefined, { companyName: name, name, email, password });
  return { token: accessToken, companyId: new ObjectId(company.id) };
}

const spread = (i, count, from = START, to = END) => new Date(from + Math.floor(((i + 0.5) * (to - from)) / count));

try {
  const acme = await register('Acme');
  const globex = await register('Globex');
  await call('PATCH', '/v1/settings', acme.token, { timezone: 'Europe/Paris' });
  const db = app.get(getConnectionToken()).db;
  const expected = {
    conversationsCreated: CONVERSATIONS,
    conversationsClosed: 0,
    messagesReceived: 0,
    messagesSent: 0,
    messagesDelivered: 0,
    messagesRead: 0,
    messagesFailed: 0,
    flowsExecuted: FLOW_RUNS,
  };

  const seedStart = performance.now();
  const conversationIds = Array.from({ length: CONVERSATIONS }, () => new ObjectId());
  await insertInBatches(db.collection('conversations'), CONVERSATIONS, (i) => {
    const createdAt = spread(i, CONVERSATIONS);
    // Two in three closed, after 1 to 72 hours: some of those late in the range close after it.
    const closedAt = i % 3 ? new Date(createdAt.getTime() + (1 + (i % 72)) * 3_600_000) : null;
    if (closedAt && closedAt.getTime() < END) expected.conversationsClosed += 1;
    return {
      _id: conversationIds[i],
      companyId: acme.companyId,
      contactId: new ObjectId(),
      channel: 'whatsapp',
      status: closedAt ? 'closed' : 'human',
      priority: 'medium',
      assignedAgentId: null,
      tags: [],
      firstResponseAt: i % 5 ? new Date(createdAt.getTime() + (i % 600) * 1000) : null,
      queuedAt: null,
      closedAt,
      isOpen: !closedAt,
      createdAt,
      updatedAt: createdAt,
    };
  });
  /** An outbound message's delivery: by i, sent, delivered, read or failed, seconds to a minute after the send. */
  const delivery = (i, createdAt) => {
    const after = (seconds) => new Date(createdAt.getTime() + seconds * 1000);
    switch ((i >> 1) % 4) {
      case 0:
        return { status: 'sent', updatedAt: after(1) };
      case 1:
        return { status: 'delivered', updatedAt: after(5), deliveredAt: after(5) };
      case 2:
        return { status: 'read', updatedAt: after(60), deliveredAt: after(5) };
      default:
        return { status: 'failed', updatedAt: after(10), error: { code: '131026', message: 'Message undeliverable' } };
    }
  };
  const message = (companyId, i, createdAt) => ({
    companyId,
    conversationId: conversationIds[i % CONVERSATIONS],
    direction: i % 2 ? 'outbound' : 'inbound',
    type: 'text',
    text: `Message ${i}`,
    senderType: i % 2 ? 'agent' : 'contact',
    ...(i % 2 ? { delivery: delivery(i, createdAt) } : {}),
    createdAt,
    updatedAt: createdAt,
  });
  const inRange = (date) => date && date.getTime() < END;
  await insertInBatches(db.collection('messages'), MESSAGES, (i) => {
    expected[i % 2 ? 'messagesSent' : 'messagesReceived'] += 1;
    const seeded = message(acme.companyId, i, spread(i, MESSAGES));
    if (inRange(seeded.delivery?.deliveredAt)) expected.messagesDelivered += 1;
    if (seeded.delivery?.status === 'read' && inRange(seeded.delivery.updatedAt)) expected.messagesRead += 1;
    if (seeded.delivery?.status === 'failed' && inRange(seeded.delivery.updatedAt)) expected.messagesFailed += 1;
    return seeded;
  });
  await insertInBatches(db.collection('messages'), NOISE, (i) => message(acme.companyId, i, spread(i, NOISE, START - 90 * 86_400_000, START)));
  await insertInBatches(db.collection('messages'), NOISE, (i) => message(globex.companyId, i, spread(i, NOISE)));
  await insertInBatches(db.collection('flow_executions'), FLOW_RUNS, (i) => ({
    companyId: acme.companyId,
    flowId: new ObjectId(),
    conversationId: conversationIds[i % CONVERSATIONS],
    status: 'completed',
    steps: [],
    trigger: 'manual',
    createdAt: spread(i, FLOW_RUNS),
  }));
  const seedMs = performance.now() - seedStart;
  globalThis.gc?.();

  const path = `/v1/analytics/metrics?startDate=${RANGE.startDate}&endDate=${RANGE.endDate}&granularity=day`;
  const answer = await call('GET', path, acme.token);
  if (answer.series.length !== 90) throw new Error(`expected 90 daily buckets, got ${answer.series.length}`);
  for (const [name, count] of Object.entries(expected)) {
    if (answer.totals[name] !== count) throw new Error(`totals.${name}: expected ${count}, got ${answer.totals[name]}`);
  }

  const time = async (route, token = acme.token) => {
    for (let i = 0; i < WARMUP; i++) await call('GET', route, token);
    const times = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      await call('GET', route, token);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    return { median: times[Math.floor(RUNS / 2)], min: times[0], max: times[RUNS - 1] };
  };
  const metrics = await time(path);
  const dashboard = await time('/v1/analytics/dashboard');

  const initech = await register('Initech');
  const report = await seedAgentsReport(db, initech.companyId);
  const agentsPath = `/v1/analytics/agents?startDate=${RANGE.startDate}&endDate=${RANGE.endDate}`;
  const agentsAnswer = await call('GET', agentsPath, initech.token);
  for (const [name, total] of Object.entries(report)) {
    const sum = agentsAnswer.data.reduce((acc, row) => acc + row[name], 0);
    if (sum !== total) throw new Error(`agents report ${name}: expected ${total} in all, got ${sum}`);
  }
  const agentsReport = await time(agentsPath, initech.token);

  const fmt = (n) => n.toFixed(1).padStart(8);
  console.log(`Analytics over HTTP on the embedded engine (seeded in ${(seedMs / 1000).toFixed(1)} s)`);
  console.log(`${MESSAGES} messages, ${CONVERSATIONS} conversations, ${FLOW_RUNS} flow runs in ${RANGE.startDate}..${RANGE.endDate} (Europe/Paris), plus ${2 * NOISE} messages outside the company or range`);
  console.log(`totals checked: ${JSON.stringify(answer.totals)}`);
  console.log(`${RUNS} requests each     median ms    min ms    max ms`);
  console.log(`metrics, 90 days by day  ${fmt(metrics.median)}  ${fmt(metrics.min)}  ${fmt(metrics.max)}`);
  console.log(`dashboard                ${fmt(dashboard.median)}  ${fmt(dashboard.min)}  ${fmt(dashboard.max)}`);
  console.log(`agents report, 90 days   ${fmt(agentsReport.median)}  ${fmt(agentsReport.min)}  ${fmt(agentsReport.max)}   (${REPORT_CONVERSATIONS} conversations, ${REPORT_AGENTS} agents, ${REPORT_CONVERSATIONS} agent messages)`);
} finally {
  await app.close();
}

/**
 * The agents report's company: REPORT_AGENTS agents, REPORT_CONVERSATIONS conversations in the range assigned to them
 * in turn (two in three closed, four in five first answered, one closed in five with an SLA breach, one in four
 * closed rated) and as many agent messages. Answers the report's sums over all agents.
 */
async function seedAgentsReport(db, companyId) {
  const agentIds = Array.from({ length: REPORT_AGENTS }, () => new ObjectId());
  await db.collection('agents').insertMany(
    agentIds.map((_id, i) => ({ _id, companyId, name: `Agent ${String(i).padStart(2, '0')}`, email: `agent${i}@initech.example`, role: 'agent', status: 'online', isActive: true, tokenVersion: 0, createdAt: new Date(START), updatedAt: new Date(START) })),
  );
  const totals = { assigned: 0, closed: 0, messagesSent: 0, slaBreaches: 0 };
  const hour = 3_600_000;
  await insertInBatches(db.collection('conversations'), REPORT_CONVERSATIONS, (i) => {
    const createdAt = spread(i, REPORT_CONVERSATIONS);
    const closedAt = i % 3 ? new Date(createdAt.getTime() + (1 + (i % 48)) * hour) : null;
    const closedInRange = closedAt !== null && closedAt.getTime() < END;
    const breached = closedInRange && i % 5 === 0;
    const assignedAt = new Date(createdAt.getTime() + 60_000);
    if (assignedAt.getTime() < END) totals.assigned += 1;
    if (closedInRange) totals.closed += 1;
    if (breached) totals.slaBreaches += 1;
    return {
      companyId,
      contactId: new ObjectId(),
      channel: 'whatsapp',
      status: closedAt ? 'closed' : 'human',
      priority: 'medium',
      assignedAgentId: agentIds[i % REPORT_AGENTS],
      assignedAt,
      tags: [],
      firstResponseAt: i % 5 ? new Date(createdAt.getTime() + (i % 900) * 1000) : null,
      queuedAt: null,
      closedAt,
      isOpen: !closedAt,
      sla: closedAt ? { policyId: new ObjectId(), breaches: breached ? ['first_response'] : [], clocks: {} } : null,
      csat: closedInRange && i % 4 === 0 ? { rating: 1 + (i % 5), comment: null, submittedAt: new Date(closedAt.getTime() + hour) } : null,
      createdAt,
      updatedAt: createdAt,
    };
  });
  await insertInBatches(db.collection('messages'), REPORT_CONVERSATIONS, (i) => {
    totals.messagesSent += 1;
    return {
      companyId,
      conversationId: new ObjectId(),
      direction: 'outbound',
      type: 'text',
      text: `Answer ${i}`,
      senderType: 'agent',
      senderId: agentIds[i % REPORT_AGENTS],
      createdAt: spread(i, REPORT_CONVERSATIONS),
      updatedAt: spread(i, REPORT_CONVERSATIONS),
    };
  });
  return totals;
}
