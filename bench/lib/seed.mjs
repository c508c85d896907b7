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

/** The words of the bulk messages; `COMMON_WORD` is in about a third of them (what the search scenario looks for). */
const WORDS = (
  'hello thanks please help where when why how my your the a to is it was for with about today tomorrow yesterday ' +
  'package delivery shipping refund return invoice payment card account password login app website price discount ' +
  'coupon size colour color red blue black white shoes shirt jacket dress bag store address phone email number track ' +
  'tracking late early arrived broken missing wrong right great good bad slow fast cancel change update question answer ' +
  'agent human bot support team manager week month hour minute box label courier warehouse stock available soon'
).split(' ');
export const COMMON_WORD = 'order';

/** A small deterministic generator (mulberry32), so every run seeds the same texts. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A message text of 5 to 12 words, a third of them with COMMON_WORD. */
function messageText(next) {
  const words = Array.from({ length: 5 + Math.floor(next() * 8) }, () => WORDS[Math.floor(next() * WORDS.length)]);
  if (next() < 1 / 3) words.splice(Math.floor(next() * words.length), 0, COMMON_WORD);
  return words.join(' ');
}

/** The app's preview of a text message (src/messages/message-preview.ts). */
const preview = (text) => [...text].slice(0, 160).join('');

/**
 * Volume the API would take too long to create: `count` conversations and a contact for every four,
 * written through the driver in the shapes the app's schemas write (all fields, `__v`, timestamps),
 * spread over the last 90 days, the newest last. With `messagesPerConversation`, each conversation gets that
 * many messages, inbound and agent replies alternating (the last is the conversation's lastMessage); without, the
 * conversations still show a last message and their counters, as if they had them. The company's agent has read
 * two thirds of its open conversations to their end (its read markers), the others not at all.
 */
export async function seedInBulk(db, company, count, { messagesPerConversation = 0, seed = 1, attributes = () => ({}) } = {}) {
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
  const next = random(seed);
  const conversationIds = Array.from({ length: count }, () => new ObjectId());
  const messages = Math.max(1, messagesPerConversation);
  // Inbound first, replies alternating: the last message is inbound when the count is odd.
  const inboundCount = Math.ceil(messages / 2);
  const lastDirection = messages % 2 === 1 ? 'inbound' : 'outbound';
  const readByAgent = (i) => i >= firstOpen && i % 3 !== 0;
  const lastMessageOf = (i, createdAt) => ({
    id: new ObjectId(),
    direction: lastDirection,
    senderType: lastDirection === 'inbound' ? 'contact' : 'agent',
    type: 'text',
    preview: preview(messageText(next)),
    createdAt: new Date(createdAt.getTime() + 60_000),
  });
  await insertInBatches(db.collection('conversations'), count, (i) => {
    const createdAt = at(i, count);
    const status = i < firstOpen ? 'closed' : OPEN_STATUSES[i % OPEN_STATUSES.length];
    const lastMessageAt = new Date(createdAt.getTime() + 60_000);
    const human = status === 'human';
    return {
      _id: conversationIds[i],
      companyId,
      contactId: contactIds[i % contactCount],
      channel: 'whatsapp',
      status,
      priority: i % 7 === 0 ? 'high' : 'medium',
      assignedAgentId: human ? agentId : null,
      assignedAt: human ? lastMessageAt : null,
      assignedBy: human ? { kind: 'auto', id: null } : null,
      tags: i % 9 === 0 ? ['billing'] : [],
      attributes: attributes(i),
      subject: null,
      lastMessageAt,
      lastMessage: lastMessageOf(i, createdAt),
      lastActivityAt: lastMessageAt,
      inboundCount,
      assigneeUnread: human && !readByAgent(i),
      snoozedUntil: null,
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
  const readAt = new Date();
  const opened = Array.from({ length: count - firstOpen }, (_, k) => firstOpen + k).filter(readByAgent);
  await insertInBatches(db.collection('conversation_read_markers'), opened.length, (k) => ({
    companyId,
    agentId,
    conversationId: conversationIds[opened[k]],
    messageId: new ObjectId(),
    messageAt: new Date(at(opened[k], count).getTime() + 60_000),
    readCount: inboundCount,
    readAt,
    createdAt: readAt,
    updatedAt: readAt,
    __v: 0,
  }));
  if (messagesPerConversation > 0) {
    await insertInBatches(db.collection('messages'), count * messagesPerConversation, (n) => {
      const i = Math.floor(n / messagesPerConversation);
      const k = n % messagesPerConversation;
      const createdAt = new Date(at(i, count).getTime() + (60_000 * (k + 1)) / messagesPerConversation);
      const inbound = k % 2 === 0;
      return {
        companyId,
        conversationId: conversationIds[i],
        direction: inbound ? 'inbound' : 'outbound',
        channel: 'whatsapp',
        type: 'text',
        text: messageText(next),
        caption: null,
        media: null,
        senderType: inbound ? 'contact' : 'agent',
        senderId: inbound ? contactIds[i % contactCount] : agentId,
        inboundCount: Math.floor(k / 2) + 1,
        ...(inbound ? {} : { delivery: { status: 'pending', updatedAt: createdAt } }),
        createdAt,
        updatedAt: createdAt,
        __v: 0,
      };
    });
  }
}

/** The database the app uses, through the driver. */
export async function connect(uri) {
  const client = await MongoClient.connect(uri);
  return { client, db: client.db() };
}
