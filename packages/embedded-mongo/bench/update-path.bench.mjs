// Micro-benchmark of the engine's update path (a script, not a test): the conversations collection of the app, with
// its 33 indexes (src/conversations/conversation.schema.ts, two of them compound wildcard indexes on attributes), 10 000
// documents shaped like conversations, then the writes routing makes, run through the command layer directly (no wire,
// no driver, so the figures are the engine's own):
// - findAndModify: `$set` of status/assignedAgentId/assignedAt/updatedAt/revision with a `$push` of a pending event
//   (EventSourceRepository.updateWithEvents);
// - update: the relay's `$pull` of the logged events, one statement per document, 14 per command (clearPending).
// Each round assigns 14 conversations, then clears their events; rounds run until 20 000 updates are done.
// Run: npm run bench:update   (builds, then runs this file against dist/ with --expose-gc)
import { ObjectId } from 'bson';
import { runCommand } from '../dist/commands/index.js';
import { Engine } from '../dist/storage/engine.js';

const DOCS = 10_000;
const UPDATES = 20_000;
const PER_COMMAND = 14;
const WARMUP_ROUNDS = 50;
const COMPANIES = 10;
const DB = 'bench';
const COLL = 'conversations';

const INDEXES = [
  [{ 'pendingEvents.occurredAt': 1 }, { sparse: true }],
  [{ companyId: 1, _id: -1 }],
  [{ companyId: 1, status: 1, _id: -1 }],
  [{ companyId: 1, assignedAgentId: 1, _id: -1 }],
  [{ companyId: 1, contactId: 1, _id: -1 }],
  [{ companyId: 1, priority: 1, _id: -1 }],
  [{ companyId: 1, status: 1, snoozedUntil: 1, _id: 1 }],
  [{ companyId: 1, createdAt: 1 }],
  [{ companyId: 1, closedAt: 1 }],
  [{ companyId: 1, firstResponseAt: 1 }],
  [{ companyId: 1, assignedAt: 1 }],
  [
    { companyId: 1, _id: 1 },
    { partialFilterExpression: { isOpen: true, 'sla.businessHoursOnly': true }, name: 'open_business_hours_slas' },
  ],
  [{ companyId: 1, 'csat.submittedAt': 1 }, { sparse: true }],
  [{ companyId: 1, lastActivityAt: -1, _id: -1 }],
  [{ companyId: 1, status: 1, lastActivityAt: -1, _id: -1 }],
  [{ companyId: 1, assignedAgentId: 1, status: 1, lastActivityAt: -1, _id: -1 }],
  [{ companyId: 1, queuedAt: 1, _id: 1 }],
  [{ companyId: 1, status: 1, queuedAt: 1, _id: 1 }],
  [
    { companyId: 1, assignedAgentId: 1, status: 1 },
    { partialFilterExpression: { assigneeUnread: true }, name: 'assignee_unread' },
  ],
  [{ companyId: 1, snoozedUntil: 1 }],
  [{ companyId: 1, status: 1, teamId: 1, priority: 1, snoozedUntil: 1, queuedAt: 1, _id: 1 }],
  [{ companyId: 1, teamId: 1, queuedAt: 1 }],
  [{ companyId: 1, 'queueTimeout.at': 1 }, { sparse: true }],
  [
    { companyId: 1, contactId: 1, channel: 1 },
    { unique: true, partialFilterExpression: { isOpen: true }, name: 'one_open_conversation_per_contact_channel' },
  ],
  [{ companyId: 1, 'attributes.$**': 1 }],
  [{ companyId: 1, status: 1, 'attributes.$**': 1 }],
  [{ companyId: 1, channel: 1, _id: -1 }],
  [{ companyId: 1, tags: 1, _id: -1 }],
  [{ companyId: 1, lastMessageAt: 1 }],
  [{ companyId: 1, 'sla.breaches': 1 }, { sparse: true }],
  [{ companyId: 1, 'csat.rating': 1 }, { sparse: true }],
  [{ companyId: 1, subject: 1 }],
  [{ companyId: 1, 'mergeHistory.mergeId': 1 }, { partialFilterExpression: { 'mergeHistory.mergeId': { $exists: true } } }],
];

const engine = new Engine();
const connection = { id: 1, maxMessageBytes: 48_000_000, auth: null, isClosed: () => false };

async function command(body) {
  const reply = await runCommand(engine, DB, body, connection, (line) => console.error(line));
  if (reply.ok !== undefined && Number(reply.ok) !== 1) throw new Error(`${Object.keys(body)[0]} failed: ${JSON.stringify(reply)}`);
  if (reply.writeErrors) throw new Error(`${Object.keys(body)[0]} failed: ${JSON.stringify(reply.writeErrors)}`);
  return reply;
}

const companies = Array.from({ length: COMPANIES }, () => new ObjectId());
const teams = Array.from({ length: 4 }, () => new ObjectId());
const agents = Array.from({ length: 50 }, () => new ObjectId());
const start = Date.UTC(2026, 0, 1);

function event(type, conversation, at) {
  return {
    id: `evt_${new ObjectId().toHexString()}`,
    type,
    occurredAt: at,
    channel: conversation.channel,
    data: {
      conversation: {
        id: conversation._id,
        status: conversation.status,
        priority: conversation.priority,
        assignedAgentId: conversation.assignedAgentId,
        tags: conversation.tags,
      },
    },
  };
}

function conversation(i) {
  const createdAt = new Date(start + i * 1000);
  const doc = {
    _id: new ObjectId(),
    companyId: companies[i % COMPANIES],
    contactId: new ObjectId(),
    contact: { id: new ObjectId(), name: `Contact ${i}`, email: `contact${i}@example.com`, phone: null },
    channel: ['whatsapp', 'sms', 'email', 'web'][i % 4],
    status: 'queued',
    priority: ['low', 'medium', 'high'][i % 3],
    assignedAgentId: null,
    assignedAt: null,
    assignedBy: null,
    tags: i % 3 ? ['support'] : ['sales', 'vip'],
    subject: `Conversation ${i}`,
    attributes: { plan: ['free', 'pro', 'enterprise'][i % 3], seats: i % 40, region: i % 2 ? 'eu' : 'us', renewal: new Date(start + i * 86_400) },
    lastMessageAt: createdAt,
    lastMessage: { id: new ObjectId(), direction: 'inbound', senderType: 'contact', type: 'text', preview: `Hello, this is message ${i}`, createdAt },
    lastActivityAt: createdAt,
    inboundCount: 1,
    assigneeUnread: false,
    firstResponseAt: null,
    queuedAt: createdAt,
    closedAt: null,
    replyWindowExpiresAt: new Date(createdAt.getTime() + 86_400_000),
    closeReason: null,
    sla: { policyId: new ObjectId(), businessHoursOnly: i % 5 === 0, breaches: [], firstResponseDueAt: new Date(createdAt.getTime() + 3_600_000) },
    csat: null,
    snoozedUntil: null,
    sleep: null,
    teamId: teams[i % teams.length],
    requiredSkills: i % 2 ? ['billing'] : [],
    queueTimeout: null,
    isOpen: true,
    revision: 1,
    createdAt,
    updatedAt: createdAt,
    __v: 0,
  };
  return doc;
}

function percentile(values, p) {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

await command({ create: COLL });
await command({
  createIndexes: COLL,
  indexes: INDEXES.map(([key, options = {}]) => ({
    key,
    name:
      options.name ??
      Object.entries(key)
        .map(([k, v]) => `${k}_${v}`)
        .join('_'),
    ...options,
  })),
});
const docs = [];
for (let from = 0; from < DOCS; from += 1000) {
  const batch = [];
  for (let i = from; i < Math.min(DOCS, from + 1000); i++) batch.push(conversation(i));
  docs.push(...batch);
  await command({ insert: COLL, documents: batch });
}
const indexCount = engine.collection(DB, COLL).indexes.size;

let next = 0;
/** One round: 14 conversations assigned (findAndModify each), then their events cleared (one update command). */
async function round(times) {
  const picked = [];
  const t0 = performance.now();
  for (let n = 0; n < PER_COMMAND; n++) {
    const doc = docs[next++ % docs.length];
    const at = new Date(start + next * 10);
    const agent = agents[next % agents.length];
    const status = doc.status === 'queued' ? 'human' : 'queued';
    const pending = event('conversation.assigned', { ...doc, status, assignedAgentId: agent }, at);
    const reply = await command({
      findAndModify: COLL,
      query: { _id: doc._id, companyId: doc.companyId, revision: doc.revision },
      update: {
        $set: { status, assignedAgentId: agent, assignedAt: at, updatedAt: at, revision: doc.revision + 1 },
        $push: { pendingEvents: { $each: [pending] } },
      },
      new: true,
    });
    if (!reply.value) throw new Error('findAndModify matched nothing');
    doc.status = status;
    doc.revision++;
    picked.push({ doc, id: pending.id });
  }
  const t1 = performance.now();
  await command({
    update: COLL,
    updates: picked.map(({ doc, id }) => ({ q: { _id: doc._id, companyId: doc.companyId }, u: { $pull: { pendingEvents: { id: { $in: [id] } } } } })),
    ordered: false,
  });
  const t2 = performance.now();
  if (times) {
    times.findAndModify.push(((t1 - t0) * 1000) / PER_COMMAND);
    times.pull.push(((t2 - t1) * 1000) / PER_COMMAND);
  }
}

for (let r = 0; r < WARMUP_ROUNDS; r++) await round(null);
globalThis.gc?.();
const times = { findAndModify: [], pull: [] };
const began = performance.now();
const rounds = Math.ceil(UPDATES / (2 * PER_COMMAND));
for (let r = 0; r < rounds; r++) await round(times);
const elapsed = performance.now() - began;
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
const fmt = (values) =>
  `mean ${mean(values).toFixed(0)} µs, p50 ${percentile(values, 50).toFixed(0)} µs, p90 ${percentile(values, 90).toFixed(0)} µs`;
console.log(`${DOCS} conversations, ${indexCount} indexes; ${rounds * PER_COMMAND * 2} updates in ${rounds} rounds`);
console.log(`findAndModify ($set + $push of an event): ${fmt(times.findAndModify)} per update`);
console.log(`update ($pull of events, ${PER_COMMAND} per command): ${fmt(times.pull)} per update`);
console.log(`all updates: ${((elapsed * 1000) / (rounds * PER_COMMAND * 2)).toFixed(0)} µs per update`);
