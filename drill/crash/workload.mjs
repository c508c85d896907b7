// The crash drill's workload: several clients doing what integrators and agents do, each change recorded when the
// API acknowledged it (2xx), so the verdict can look for exactly its events in the log.

/** Operations and their weights: every event type comes out of them (flows and auto-assignment add their own). */
const OPERATIONS = [
  ['inbound', 40],
  ['reply', 14],
  ['handoff', 12],
  ['assign', 10],
  ['close', 12],
  ['flow', 12],
];
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

/**
 * Runs `total` operations from `clients` loops. `api()` answers a client of a live API process (or null while none
 * is up: the operation waits); `onOperation(n)` runs after each operation (the drill kills processes from there). Answers the record:
 * `acked` (kind + answer body of every 2xx), `sent` and `lost` (no answer: the process died under it) per kind.
 */
export async function runWorkload({ api, company, key, manualAgentId, manualFlowId, total, clients, onOperation }) {
  const record = { acked: [], sent: {}, lost: {}, refused: {} };
  const open = new Set();
  let done = 0;
  const count = (bucket, kind) => (bucket[kind] = (bucket[kind] ?? 0) + 1);

  const requests = {
    inbound: (n) => ['POST', '/api/external/messages', { apiKey: key, json: { from: { phone: `+1415555${3000 + (n % CONTACTS)}` }, text: n % HELP_EVERY === 0 ? `help me with order ${n}` : `message ${n}` } }],
    reply: (n, id) => ['POST', `/v1/conversations/${id}/messages`, { token: company.token, json: { text: `reply ${n}` } }],
    handoff: (n, id) => ['PATCH', `/v1/conversations/${id}`, { token: company.token, json: { status: 'queued' } }],
    assign: (n, id) => ['POST', `/v1/conversations/${id}/assign`, { token: company.token, json: { agentId: manualAgentId } }],
    close: (n, id) => ['POST', `/v1/conversations/${id}/close`, { token: company.token, json: { reason: `done ${n}` } }],
    flow: (n, id) => ['POST', `/v1/flows/${manualFlowId}/execute`, { token: company.token, json: { conversationId: id } }],
  };

  async function operate(n) {
    const kind = open.size === 0 ? 'inbound' : chooseOperation();
    const conversationId = kind === 'inbound' ? undefined : pick([...open]);
    let client = api();
    // Both processes down at once (one restarting, the other just killed): wait, as a connector's retry would.
    while (!client) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      client = api();
    }
    count(record.sent, kind);
    const [method, path, options] = requests[kind](n, conversationId);
    let response;
    try {
      response = await client.call(method, path, options);
    } catch {
      return count(record.lost, kind);
    }
    if (response.status >= 300) return count(record.refused, kind);
    record.acked.push({ kind, body: response.json });
    const conversation = kind === 'inbound' ? response.json.data.conversation : kind === 'reply' || kind === 'flow' ? null : response.json;
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
