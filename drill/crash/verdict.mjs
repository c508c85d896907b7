// The crash drill's checks, on what the engine holds and what the receiver got after the system settled.
import { ObjectId } from 'mongodb';
import { signatureValid } from '../../harness/receivers.mjs';

const key = (conversation) => `${conversation.id}@${conversation.updatedAt}`;

/** What each acknowledged change must have produced in the log: one event of this type matching this key (or none). */
function expectedEvent({ kind, body, reported }) {
  switch (kind) {
    case 'inbound':
      return ['message.received', body.data.message.id];
    case 'reply':
      return ['message.sent', body.id];
    case 'handoff':
      return ['conversation.queued', key(body)];
    case 'assign':
      return ['conversation.assigned', key(body)];
    case 'close':
      return ['conversation.closed', key(body)];
    case 'flow':
      return ['flow.executed', body.executionId];
    case 'snooze':
      return ['conversation.snoozed', key(body)];
    case 'note':
      return ['conversation.note_added', body.id];
    case 'status':
      // A report answered with the status it reported moved the message there, now or before (a repeat): that
      // move's event exists once. Any other answer is a report that came too late, with no event of its own.
      return body.data.delivery.status === reported ? ['message.status_changed', `${body.data.id}@${reported}`] : null;
  }
}

/** The key an event is found by: a message's id (and status reached), a conversation's state (id and updatedAt), a run's id. */
function keyOf(event) {
  if (event.type === 'message.status_changed') return `${event.data.message.id}@${event.data.message.delivery.status}`;
  if (event.type === 'conversation.note_added') return event.data.message.id;
  if (event.type.startsWith('message.')) return event.data.message.id;
  if (event.type === 'flow.executed') return event.data.execution.executionId;
  if (event.type === 'conversation.created') return event.data.conversation.id;
  // Two deadlines found missed at once (after the fact) are logged in one write: the metric and due time tell them apart.
  if (event.type.startsWith('sla.')) return `${event.data.conversation.id}:${event.data.metric}@${event.data.dueAt}`;
  return key(event.data.conversation);
}

function tally(items, keyFn) {
  const counts = new Map();
  for (const item of items) counts.set(keyFn(item), (counts.get(keyFn(item)) ?? 0) + 1);
  return counts;
}

/** Answers `{ counts, violations }`; `violations` lists what broke a promise of the event log. */
export async function judge({ db, companyId, record, receiver, kept, deleted, agents, capacity, maxLoadSeen }) {
  const company = new ObjectId(companyId);
  const log = await db.collection('events').find({ companyId: company }).sort({ sequence: 1 }).toArray();
  const byTypeAndKey = tally(log, (event) => `${event.type} ${keyOf(event)}`);
  const violations = [];
  const fail = (what, items) => items.length && violations.push(`${items.length} ${what}, e.g. ${items.slice(0, 3).join('; ')}`);

  // Every acknowledged change has exactly its event, once. An assign to the agent a conversation already has
  // changes nothing (no event): that agent was assigned to it by an earlier, logged assignment.
  const assignedTo = new Set(log.filter((event) => event.type === 'conversation.assigned').map((event) => `${event.data.conversation.id} ${event.data.agentId}`));
  const wrongCount = [];
  for (const ack of record.acked) {
    const expected = expectedEvent(ack);
    if (!expected) continue;
    const [type, id] = expected;
    const found = byTypeAndKey.get(`${type} ${id}`) ?? 0;
    const unchanged = ack.kind === 'assign' && found === 0 && assignedTo.has(`${ack.body.id} ${ack.body.assignedAgentId}`);
    if (found !== 1 && !unchanged) wrongCount.push(`${ack.kind} → ${found}× ${type} ${id}`);
  }
  fail('acknowledged changes without exactly one event', wrongCount);
  fail('changes logged twice', [...byTypeAndKey].filter(([, n]) => n > 1).map(([what, n]) => `${n}× ${what}`));

  // Every stored record has its creation logged once; nothing is left pending on a record.
  const conversations = await db.collection('conversations').find({ companyId: company }).toArray();
  const messages = await db.collection('messages').find({ companyId: company }).toArray();
  fail('conversations without exactly one conversation.created', conversations.filter((c) => byTypeAndKey.get(`conversation.created ${c._id}`) !== 1).map((c) => String(c._id)));
  const eventsOfMessage = (m) => ['message.received', 'message.sent', 'conversation.note_added'].reduce((sum, type) => sum + (byTypeAndKey.get(`${type} ${m._id}`) ?? 0), 0);
  fail('messages without exactly one event', messages.filter((m) => eventsOfMessage(m) !== 1).map((m) => String(m._id)));
  // A connector's retries: no channel message id stored twice; every one sent and not refused (the unanswered ones
  // were retried until answered) stored, each acknowledged one as the message its answer showed.
  const inbound = messages.filter((message) => message.direction === 'inbound');
  const byExternalId = tally(inbound, (message) => `${message.channel} ${message.externalId}`);
  fail('externalIds stored twice', [...byExternalId].filter(([, n]) => n > 1).map(([id, n]) => `${n}× ${id}`));
  const storedIds = new Map(inbound.map((message) => [message.externalId, String(message._id)]));
  const acknowledged = record.acked.filter((ack) => ack.kind === 'inbound').map((ack) => ack.body.data.message);
  fail('acknowledged inbound messages missing', acknowledged.filter((message) => storedIds.get(message.externalId) !== message.id).map((message) => message.externalId));
  const refused = new Set(record.inboundRefused);
  fail('inbound messages sent and never stored', record.inboundSent.filter((externalId) => !refused.has(externalId) && !storedIds.has(externalId)));
  const pending = [];
  for (const name of ['conversations', 'messages', 'flow_executions']) {
    for (const doc of await db.collection(name).find({ companyId: company, 'pendingEvents.0': { $exists: true } }).toArray()) pending.push(`${name} ${doc._id}`);
  }
  fail('records still carrying events not logged', pending);

  // No flow ran twice for one event; every run finished; each of its messages was sent once.
  const executions = await db.collection('flow_executions').find({ companyId: company }).toArray();
  const triggered = executions.filter((execution) => execution.triggerKey);
  fail('flows run twice for one event', [...tally(triggered, (execution) => execution.triggerKey)].filter(([, n]) => n > 1).map(([k]) => k));
  fail('flow runs left running', executions.filter((execution) => execution.status === 'running').map((execution) => String(execution._id)));
  const flowMessages = tally(messages.filter((message) => message.dedupeKey), (message) => message.dedupeKey);
  fail('flow messages sent twice', [...flowMessages].filter(([, n]) => n > 1).map(([k]) => k));

  // Every logged event reached the kept webhook, with one webhook-id per event; nothing reached the deleted one.
  const requests = receiver.to('/kept');
  const idsPerEvent = new Map();
  for (const request of requests) {
    const id = JSON.parse(request.body).id;
    idsPerEvent.set(id, (idsPerEvent.get(id) ?? new Set()).add(request.headers['webhook-id']));
  }
  fail('logged events not delivered', log.filter((event) => !idsPerEvent.has(event._id)).map((event) => `${event.type} ${event._id}`));
  fail('events delivered under two webhook-ids', [...idsPerEvent].filter(([, ids]) => ids.size > 1).map(([id]) => id));
  fail('bad signatures', requests.filter((request) => !signatureValid(kept.secret, request)).map((request) => request.headers['webhook-id']));
  fail('requests to the deleted webhook', receiver.to('/deleted').map((request) => request.headers['webhook-id']));

  // No auto-assigned agent over capacity, at any sample during the run or at the end.
  const load = tally(conversations.filter((c) => c.status === 'human' && c.assignedAgentId), (c) => String(c.assignedAgentId));
  const overloaded = agents.filter((agentId) => (load.get(agentId) ?? 0) > capacity || (maxLoadSeen.get(agentId) ?? 0) > capacity);
  fail('agents over capacity', overloaded.map((agentId) => `${agentId}: now ${load.get(agentId) ?? 0}, max seen ${maxLoadSeen.get(agentId) ?? 0}`));

  const snoozes = judgeSnoozes(log, conversations);
  violations.push(...snoozes.violations);
  const timersLeft = await db.collection('timers').countDocuments({ companyId: company });
  if (timersLeft > 0) violations.push(`${timersLeft} timers left after every snooze woke`);

  const counts = {
    inbound: `${record.inboundSent.length} sent with an externalId, ${inbound.length} stored, ${new Set(acknowledged.map((message) => message.externalId)).size} acknowledged, ${[...byExternalId.values()].filter((n) => n > 1).length} stored twice`,
    logged: Object.fromEntries(tally(log, (event) => event.type)),
    deliveries: `${idsPerEvent.size} events delivered in ${requests.length} requests (${requests.length - idsPerEvent.size} repeated)`,
    flows: `${triggered.length} triggered runs, ${executions.length - triggered.length} manual, ${flowMessages.size} flow messages`,
    capacity: `max ${capacity} per auto-assigned agent; highest seen ${Math.max(0, ...agents.map((agentId) => maxLoadSeen.get(agentId) ?? 0))}`,
    deletedWebhook: deleted.id,
    snoozes: snoozes.summary,
  };
  return { counts, violations };
}

/** A deadline within this of its target's end is a race between the answer and the firing: either outcome is right. */
const RACE_MS = 1000;

/**
 * The SLA deadlines of the conversations on `channel` (under `policy`, which counts every second): a first response or
 * resolution missed (answered or closed after its due time, or never) has exactly one `sla.breached` with that due
 * time; one met in time has none; no warning is logged twice. Answers `{ counts, violations }`.
 */
export async function judgeSla({ db, companyId, channel, policy }) {
  const company = new ObjectId(companyId);
  const conversations = await db.collection('conversations').find({ companyId: company, channel }).toArray();
  const events = await db.collection('events').find({ companyId: company, type: { $in: ['sla.warning', 'sla.breached'] } }).toArray();
  const fired = tally(events, (event) => `${event.type} ${event.data.conversation.id} ${event.data.metric}`);
  const now = Date.now();
  const violations = [];
  const fail = (what, items) => items.length && violations.push(`${items.length} ${what}, e.g. ${items.slice(0, 3).join('; ')}`);
  const wrong = [];
  let missed = 0;
  let met = 0;
  let snoozed = 0;
  for (const conversation of conversations) {
    // A snooze stopped its clocks: its due times are not the plain ones (it is still checked for repeats below).
    if (conversation.sleep) {
      snoozed += 1;
      continue;
    }
    const ends = {
      first_response: Math.min(conversation.firstResponseAt?.getTime() ?? Infinity, conversation.closedAt?.getTime() ?? Infinity),
      resolution: conversation.closedAt?.getTime() ?? Infinity,
    };
    for (const [metric, seconds] of [['first_response', policy.firstResponseSeconds], ['resolution', policy.resolutionSeconds]]) {
      const due = conversation.createdAt.getTime() + seconds * 1000;
      const end = Math.min(ends[metric], now);
      if (Math.abs(end - due) < RACE_MS) continue;
      const expected = end > due ? 1 : 0;
      if (expected) missed += 1;
      else met += 1;
      const found = fired.get(`sla.breached ${conversation._id} ${metric}`) ?? 0;
      const dueAt = events.find((event) => event.type === 'sla.breached' && event.data.conversation.id === String(conversation._id) && event.data.metric === metric)?.data.dueAt;
      if (found !== expected || (found && dueAt !== new Date(due).toISOString())) wrong.push(`${conversation._id} ${metric}: ${found} breach(es), expected ${expected}${dueAt ? ` (due ${dueAt})` : ''}`);
    }
  }
  fail('SLA targets without exactly their breach', wrong);
  fail('SLA warnings or breaches logged twice', [...fired].filter(([, n]) => n > 1).map(([what, n]) => `${n}× ${what}`));
  const warnings = events.filter((event) => event.type === 'sla.warning').length;
  return {
    counts: `${conversations.length} conversations (${snoozed} snoozed at some point): ${missed} targets missed, ${met} met; ${warnings} warnings, ${events.length - warnings} breaches logged`,
    violations,
  };
}

/** A wake-up this much after `until` is late by the contract's measure (within 5 s). */
const LATE_MS = 5000;

/**
 * Walks the log in order, per conversation: every conversation.unsnoozed ends a sleep that a conversation.snoozed
 * began (none twice, none while awake), a timer's wake-up comes at or after the `until` it was set for, and no
 * conversation is still asleep (or woke without its event). A close ends a sleep without an event. Timer lateness is
 * reported: a process killed while it fires a timer holds it until its lease expires (30 s).
 */
function judgeSnoozes(log, conversations) {
  const asleepUntil = new Map();
  const woken = { timer: 0, contact_message: 0, agent: 0 };
  const lateness = [];
  const twice = [];
  const early = [];
  let snoozed = 0;
  for (const event of log) {
    const id = event.data.conversation?.id;
    if (event.type === 'conversation.snoozed') {
      snoozed += 1;
      asleepUntil.set(id, new Date(event.data.conversation.snoozedUntil));
    } else if (event.type === 'conversation.unsnoozed') {
      const until = asleepUntil.get(id);
      asleepUntil.delete(id);
      if (!until) {
        twice.push(`${id} (${event.data.reason}, ${event._id})`);
        continue;
      }
      woken[event.data.reason] = (woken[event.data.reason] ?? 0) + 1;
      if (event.data.reason !== 'timer') continue;
      const late = new Date(event.occurredAt).getTime() - until.getTime();
      if (late < 0) early.push(`${id} woke ${-late} ms before ${until.toISOString()}`);
      else lateness.push(late);
    } else if (event.type === 'conversation.closed') {
      asleepUntil.delete(id);
    }
  }
  const violations = [];
  const fail = (what, items) => items.length && violations.push(`${items.length} ${what}, e.g. ${items.slice(0, 3).join('; ')}`);
  fail('snoozes woken twice (conversation.unsnoozed while awake)', twice);
  fail('snoozes woken by their timer before their time', early);
  fail('conversations still snoozed after settling', conversations.filter((c) => c.snoozedUntil).map((c) => `${c._id} until ${c.snoozedUntil.toISOString()}`));
  fail('snoozes that ended without conversation.unsnoozed or a close', [...asleepUntil.keys()]);
  lateness.sort((a, b) => a - b);
  const percentile = (p) => (lateness.length ? lateness[Math.min(lateness.length - 1, Math.floor(p * lateness.length))] : 0);
  const late = lateness.filter((ms) => ms > LATE_MS).length;
  const summary =
    `${snoozed} conversation.snoozed; woken once each: ${woken.timer} by their timer, ${woken.contact_message} by the contact, ` +
    `${woken.agent} by an agent; timer wake-ups after until: median ${percentile(0.5)} ms, p95 ${percentile(0.95)} ms, ` +
    `max ${lateness.at(-1) ?? 0} ms, ${late} later than ${LATE_MS / 1000} s`;
  return { violations, summary };
}
