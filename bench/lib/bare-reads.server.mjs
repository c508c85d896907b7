// The stack's floor for a list page: the bare NestJS-Express app of bare-nest.server.mjs, plus the page's database
// reads through the driver, sent as the app sends them (TenantRepository.findPlain: one `find` command each, the
// same filter, sort, limit and projection). It answers the app's bytes, so the gap to bare NestJS-Express is the
// reads alone (driver, BSON, the engine on the same core), and the gap to the app is the app's own work:
// authentication, rate limit, validation, the views. Mirrors InboxService.list (conversations keep a copy of their
// contact, so the page is one read of conversations, then one of the caller's read markers on them: ConversationsService
// .page, ReadMarkersRepository.forConversations), for the default page and the inbox page (two statuses by activity),
// and MessagesService.list (its first page, newest first); keep them alike.
// Run as a child by rounds.mjs: node bare-reads.server.mjs <bodies.json> <current.json> (the app's pages as they are
// when it starts: the write scenarios add messages after the bodies were taken), env PORT, MONGODB_URI,
// READS_COMPANY, READS_AGENT, READS_THREAD, READS_INBOX_COMPANY, READS_INBOX_AGENT (the agents whose markers are read:
// the companies' admins, who make the bench's requests).
import { MongoClient, ObjectId } from 'mongodb';
import { readFileSync } from 'node:fs';
import { serveBare } from './bare-app.mjs';
// The built app's own projections (npm run bench builds first), so that the reads stay the app's.
import { LISTED_CONVERSATION_FIELDS } from '../../dist/conversations/conversation.view.js';
import { READ_MARKER_VIEW_FIELDS } from '../../dist/conversations/read-marker.schema.js';
import { MESSAGE_VIEW_FIELDS } from '../../dist/messages/message.view.js';

const bodies = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const current = JSON.parse(readFileSync(process.argv[3], 'utf8'));
const client = await MongoClient.connect(process.env.MONGODB_URI);
const db = client.db();
const companyId = new ObjectId(process.env.READS_COMPANY);
const agentId = new ObjectId(process.env.READS_AGENT);
const threadId = new ObjectId(process.env.READS_THREAD);
const inboxCompanyId = new ObjectId(process.env.READS_INBOX_COMPANY);
const inboxAgentId = new ObjectId(process.env.READS_INBOX_AGENT);
const LIMIT = 50;

async function find(collection, filter, { sort, projection, limit }) {
  const { cursor } = await db.command({ find: collection, filter, sort, projection, limit, batchSize: limit });
  return cursor.firstBatch;
}

/** A page of conversations (filter without the company), then the agent's read markers on them, as the app reads them. */
async function conversationsPage(company, agentId, filter, sort) {
  const rows = await find('conversations', { ...filter, companyId: company }, { sort, projection: LISTED_CONVERSATION_FIELDS, limit: LIMIT + 1 });
  const page = rows.slice(0, LIMIT);
  const ids = page.map((c) => c._id);
  await find('conversation_read_markers', { agentId, conversationId: { $in: ids }, companyId: company }, { projection: READ_MARKER_VIEW_FIELDS, limit: ids.length });
  return ids.map((id) => id.toHexString());
}

/** Each page's reads; what they found, for the check that they are the app's (`checkAgainstApp`). */
const READS = {
  conversations: async () => conversationsPage(companyId, agentId, {}, { _id: -1 }),
  inbox: async () => conversationsPage(inboxCompanyId, inboxAgentId, { status: { $in: ['queued', 'human'] } }, { lastActivityAt: -1, _id: -1 }),
  messages: async () => {
    const page = await find('messages', { companyId, conversationId: threadId }, { sort: { createdAt: -1, _id: -1 }, projection: MESSAGE_VIEW_FIELDS, limit: LIMIT + 1 });
    return page.slice(0, LIMIT).map((m) => m._id.toHexString());
  },
};

/** Refuses to serve when a page's reads do not find what the app's answer shows: the floor would measure other work. */
async function checkAgainstApp(name, answer) {
  const found = await READS[name]();
  const shown = answer.data.map((record) => record.id);
  if (found.length !== shown.length || [...found].sort().join() !== [...shown].sort().join()) {
    throw new Error(`bare-reads: the ${name} reads do not find the app's page; align them with the app's queries`);
  }
}

for (const [name, page] of Object.entries(current)) await checkAgainstApp(name, JSON.parse(page));

await serveBare(bodies, READS);
