import { MongoClient, ObjectId } from 'mongodb';
import { forEachConcurrently } from '../../harness/api.mjs';

const PASSWORD = 'correct horse battery staple';
const BATCH = 5_000;
/** The statuses of the open bulk conversations, in turn; three in four bulk conversations are closed. */
const OPEN_STATUSES = ['bot', 'queued', 'human', 'human'];

/** A US number the app accepts (E.164, a possible length); `area` keeps sets of numbers apart. */
export const phone = (area, i) => `+1${area}${String(i).padStart(7, '0')}`;

/** Registers a company with its admin and an API key, through the API. */
export async function registerCompany(api, name, scopes = ['messages:write', 'webhooks:manage']) {
  const email = `admin-${name.toLowerCase()}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@bench.example`;
  const registered = await api.json('POST', '/v1/auth/register', {
    body: { companyName: name, name: `${name} Admin`, email, password: PASSWORD },
  });
  const token = registered.accessToken;
  const key = await api.json('POST', '/v1/api-keys', { token, body: { name: 'bench', scopes } });
  return { name, token, apiKey: key.key, companyId: registered.company.id, agentId: registered.agent.id };
}

/**
 * The company the request scenarios use, built through the API as a channel connector and an agent
 * would: `contacts` inbound messages from as many numbers (a contact and a conversation each), then a
 * conversation of `threadLength` messages, inbound and agent replies alternating.
 */
export async function seedThroughApi(api, company, { contacts, threadLength }) {
  await forEachConcurrently(contacts, 16, (i) =>
    api.call('POST', '/api/external/messages', {
      apiKey: company.apiKey,
      body: { from: { phone: phone(415, i), name: `Contact ${i}` }, text: `Hello, this is message ${i}`, channel: 'whatsapp' },
    }),
  );
  let threadId;
  for (let i = 0; i < threadLength; i++) {
    if (i % 2 === 0) {
      const { data } = await api.json('POST', '/api/external/messages', {
        apiKey: company.apiKey,
        body: { from: { phone: phone(415, 0) }, text: `Question ${i}: where is my order?`, channel: 'whatsapp' },
      });
      threadId = data.conversation.id;
    } else {
      await api.call('POST', `/v1/conversations/${threadId}/messages`, {
        token: company.token,
        body: { text: `Answer ${i}: it left the warehouse this morning and arrives tomorrow.` },
      });
    }
  }
  const { data: replyTarget } = await api.json('POST', '/api/external/messages', {
    apiKey: company.apiKey,
    body: { from: { phone: phone(415, 1) }, text: 'Can somebody call me back?', channel: 'whatsapp' },
  });
  return { threadId, replyConversationId: replyTarget.conversation.id, phones: contacts };
}

/** Inserts `make(i)` for i in [0, count) through the driver, 5 000 documents a call, unordered. */
export async function insertInBatches(collection, count, make) {
  for (let from = 0; from < count; from += BATCH) {
    const batch = [];
    for (let i = from; i < Math.min(count, from + BATCH); i++) batch.push(make(i));
    await collection.insertMany(batch, { ordered: false });
  }
}

/**
 * Volume the API would take too long to create: `count` conversations and a contact for every four,
 * written through the driver in the shapes the app's schemas write (all fields, `__v`, timestamps),
 * spread over the last 90 days, the newest last.
 */
export async function seedInBulk(db, company, count) {
  const companyId = new ObjectId(company.companyId);
  const agentId = new ObjectId(company.agentId);
  const contactCount = Math.max(1, Math.ceil(count / 4));
  const start = Date.now() - 90 * 86_400_000;
  const at = (i, total) => new Date(start + Math.floor((i * 90 * 86_400_000) / total));
  const contactIds = Array.from({ length: contactCount }, () => new ObjectId());
  await insertInBatches(db.collection('contacts'), contactCount, (i) => ({
    _id: contactIds[i],
    companyId,
    name: `Customer ${i}`,
    phone: phone(212, i),
    tags: i % 5 === 0 ? ['vip'] : [],
    attributes: {},
    createdAt: at(i, contactCount),
    updatedAt: at(i, contactCount),
    __v: 0,
  }));
  // Only the newest `contactCount` conversations may be open, one per contact (the partial unique index).
  const firstOpen = count - contactCount;
  await insertInBatches(db.collection('conversations'), count, (i) => {
    const createdAt = at(i, count);
    const status = i < firstOpen ? 'closed' : OPEN_STATUSES[i % OPEN_STATUSES.length];
    const lastMessageAt = new Date(createdAt.getTime() + 60_000);
    const human = status === 'human';
    return {
      companyId,
      contactId: contactIds[i % contactCount],
      channel: 'whatsapp',
      status,
      priority: i % 7 === 0 ? 'high' : 'medium',
      assignedAgentId: human ? agentId : null,
      assignedAt: human ? lastMessageAt : null,
      assignedBy: human ? { kind: 'auto', id: null } : null,
      tags: i % 9 === 0 ? ['billing'] : [],
      subject: null,
      lastMessageAt,
      firstResponseAt: status === 'bot' ? null : lastMessageAt,
      queuedAt: status === 'queued' ? lastMessageAt : null,
      closedAt: status === 'closed' ? new Date(lastMessageAt.getTime() + 3_600_000) : null,
      closeReason: null,
      isOpen: status !== 'closed',
      createdAt,
      updatedAt: lastMessageAt,
      __v: 0,
    };
  });
}

/** The database the app uses, through the driver. */
export async function connect(uri) {
  const client = await MongoClient.connect(uri);
  return { client, db: client.db() };
}
