// The crash drill's workload: several clients doing what integrators and agents do (snoozes and private notes included), each change recorded when the
// API acknowledged it (2xx), so the verdict can look for exactly its events in the log.

/** Operations and their weights: every event type comes out of them (flows and auto-assignment add their own). */
const OPERATIONS = [
  ['inbound', 40],
  ['reply', 14],
  ['handoff', 12],
  ['assign', 10],
  ['close', 12],
  ['flow', 12],
  ['status', 10],
  ['snooze', 10],
  ['note', 4],
];
/** Snoozes wake 1 to 8 s after they are made: they fall due all through the run, kills included. */
const SNOOZE_MIN_MS = 1000;
const SNOOZE_SPREAD_MS = 7000;
/** What a connector reports of the replies it relayed; reports may come late or twice, as they do. */
const REPORTED = ['sent', 'delivered', 'read', 'failed'];
const TOTAL_WEIGHT = OPERATIONS.reduce((sum, [, weight]) => sum + weight, 0);
const CONTACTS = 60;
/** One inbound message in three asks for help: the inbound flow's keyword. */
const HELP_EVERY = 3;

const pick = (items) => items[Math.floor(Math.random() * items.length)];

function chooseOperation() {
  let roll = Math.random() * TOTAL_WEIGHT;
  for (const [name, weight] of OPERATIONS) {
    roll -= weight;
    if (roll < 0) return name;
  }
  return OPERATIONS[0][0];
}

/** A connector's retries of an unanswered message: up to 20, half a second apart. */
const RETRY_ATTEMPTS = 20;
const RETRY_WAIT_MS = 500;

/** One inbound message in five opens a conversation under the drill's SLA policy (SLA_CHANNEL), from a new contact. */
const SLA_EVERY = 5;
export const SLA_CHANNEL = 'sla';

/**
 * What a connector posts: every message with the channel's own id, so that a retry is safe. Most come from a few
 * WhatsApp contacts; some open a conversation each on the SLA channel, whose deadlines fall due while processes die.
 */
function inboundBody(n) {
  const text = n % HELP_EVERY === 0 ? `help me with order ${n}` : `message ${n}`;
  if (n % SLA_EVERY === 1) return { from: { phone: `+1415556${String(n).padStart(4, '0')}` }, text, channel: SLA_CHANNEL, externalId: `sla.drill-${n}` };
  return { from: { phone: `+1415555${3000 + (n % CONTACTS)}` }, text, channel: 'whatsapp', externalId: `wamid.drill-${n}` };
}

/**
 * Runs `total` operations from `clients` loops. `api()` answers a client of a live API process (or null while none
 * is up: the operation waits); `onOperation(n)` runs after each operation (the drill kills processes from there). Answers the record:
 * `acked` (kind, answer body and reported status of every 2xx), `sent` and `lost` (no answer: the process died under it) per kind,
 * `inboundSent` and `inboundRefused` (the externalIds of the inbound messages sent, and of those answered 4xx), and
 * `unanswered` (the bodies of the inbound ones lost).
 */
export async function runWorkload({ api, company, key, manualAgentId, manualFlowId, total, clients, onOperation }) {
  const record = { acked: [], sent: {}, lost: {}, refused: {}, unanswered: [], inboundSent: [], inboundRefused: [] };
  const open = new Set();
  const replies = [];
  let done = 0;
  const count = (bucket, kind) => (bucket[kind] = (bucket[kind] ?? 0) + 1);

  const requests = {
    inbound: (n) => ['POST', '/api/external/messages', { apiKey: key, json: inboundBody(n) }],
    reply: (n, id) => ['POST', `/v1/conversations/${id}/messages`, { token: company.token, json: { text: `reply ${n}` } }],
    handoff: (n, id) => ['PATCH', `/v1/conversations/${id}`, { token: company.token, json: { status: 'queued' } }],
    assign: (n, id) => ['POST', `/v1/conversations/${id}/assign`, { token: company.token, json: { agentId: manualAgentId } }],
    close: (n, id) => ['POST', `/v1/conversations/${id}/close`, { token: company.token, json: { reason: `done ${n}` } }],
    flow: (n, id) => ['POST', `/v1/flows/${manualFlowId}/execute`, { token: company.token, json: { conversationId: id } }],
    status: (n, id) => ['POST', `/api/external/messages/${id}/status`, { apiKey: key, json: { status: pick(REPORTED), externalId: `wamid.out-${id}` } }],
    snooze: (n, id) => ['POST', `/v1/conversations/${id}/snooze`, { token: company.token, json: { until: new Date(Date.now() + SNOOZE_MIN_MS + Math.random() * SNOOZE_SPREAD_MS).toISOString() } }],
    note: (n, id) => ['POST', `/v1/conversations/${id}/messages`, { token: company.token, json: { text: `note ${n}`, private: true } }],
  };

  /** The operation and what it acts on: a conversation, a reply (status), or nothing (inbound). */
  function choose() {
    const kind = open.size === 0 ? 'inbound' : chooseOperation();
    if (kind === 'status') return replies.length === 0 ? ['inbound'] : [kind, pick(replies)];
    return [kind, kind === 'inbound' ? undefined : pick([...open])];
  }

  async function operate(n) {
    const [kind, target] = choose();
    let client = api();
    // Both processes down at once (one restarting, the other just killed): wait, as a connector's retry would.
    while (!client) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      client = api();
    }
    count(record.sent, kind);
    const [method, path, options] = requests[kind](n, target);
    if (kind === 'inbound') record.inboundSent.push(options.json.externalId);
    let response;
    try {
      response = await client.call(method, path, options);
    } catch {
      if (kind === 'inbound') record.unanswered.push(options.json);
      return count(record.lost, kind);
    }
    if (response.status >= 300) {
      if (kind === 'inbound') record.inboundRefused.push(options.json.externalId);
      return count(record.refused, kind);
    }
    record.acked.push({ kind, body: response.json, ...(kind === 'status' ? { reported: options.json.status } : {}) });
    if (kind === 'reply') replies.push(response.json.id);
    const conversation = kind === 'inbound' ? response.json.data.conversation : ['reply', 'flow', 'status', 'note'].includes(kind) ? null : response.json;
    if (conversation?.status === 'closed') open.delete(conversation.id);
    else if (conversation) open.add(conversation.id);
  }

  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (done < total) {
        const n = done++;
        await operate(n);
        await onOperation(done);
      }
    }),
  );
  return record;
}

/**
 * What a connector does about the inbound messages that got no answer (their process was killed): posts each again,
 * the same body with the same externalId, until it is answered. A 201 means the killed process had not stored it;
 * a 200 (`duplicate: true`) that it had. Each answer is acknowledged like any other; answers the counts.
 */
export async function retryUnanswered({ api, key, record }) {
  const retried = { stored: 0, duplicates: 0, refused: 0, unanswered: 0 };
  for (const json of record.unanswered) {
    for (let attempt = 1; ; attempt += 1) {
      let response;
      try {
        response = await api().call('POST', '/api/external/messages', { apiKey: key, json });
      } catch {
        if (attempt === RETRY_ATTEMPTS) {
          retried.unanswered += 1;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_WAIT_MS));
        continue;
      }
      if (response.status >= 300) {
        record.inboundRefused.push(json.externalId);
        retried.refused += 1;
      } else {
        record.acked.push({ kind: 'inbound', body: response.json });
        if (response.json.data.duplicate) retried.duplicates += 1;
        else retried.stored += 1;
      }
      break;
    }
  }
  return retried;
}
