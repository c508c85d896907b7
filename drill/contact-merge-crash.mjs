// Contact merge crash drill (contract section 22): two API processes on one engine; each round merges a contact with
// open conversations on many channels (so that the merge takes a while: each clashing conversation is closed, then
// all move) through process A, `kill -9`s A at a random moment once its record is written, restarts A, and checks once the recovery timer
// has fired: the merge either never started (the source untouched) or is finished (the source a tombstone answering
// 410, every conversation on the target, one open per channel, exactly one contact.merged), never half done, and no
// contact is left locked. Then the same for the merge's undo. Exits 1 on a violation.
// Run: npm run drill -- contact-merge-crash   (or node drill/contact-merge-crash.mjs after nest build)
import { MongoClient, ObjectId } from 'mongodb';
import { freePort } from '../harness/children.mjs';
import { apiClient } from './lib/client.mjs';
import { createApiKey, registerCompany } from './lib/fixtures.mjs';
import { startApi, startEngine } from './lib/processes.mjs';

const ROUNDS = Number(process.env.DRILL_ROUNDS ?? 4);
const CHANNELS = 40;
/** MERGE_RESUME_AFTER_MS (src/contact-merges/contact-merge-runner.ts), and the lanes' polls, with room to spare. */
const RECOVERY_TIMEOUT_MS = 40_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const violations = [];
const violation = (message) => {
  violations.push(message);
  console.error(`VIOLATION: ${message}`);
};

async function waitUntil(probe, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(200);
  }
}

const engine = await startEngine();
const mongodbUri = `${engine.uri}/merge-drill`;
const mongo = await MongoClient.connect(mongodbUri);
const db = mongo.db();
const apis = [];
for (let index = 0; index < 2; index += 1) {
  const port = await freePort();
  apis.push({ port, process: await startApi({ port, mongodbUri }) });
}
const client = (index) => apiClient(apis[index].process.baseUrl);
const survivor = client(1);
const company = await registerCompany(survivor, 'Merge Drill Co');
const { key } = await createApiKey(survivor, company, ['messages:write']);
const companyId = new ObjectId(company.companyId);

/** A contact with a phone and an open conversation on each drill channel. */
async function contactWithConversations(name, phone) {
  const contact = await survivor.expect(201, 'POST', '/v1/contacts', { token: company.token, json: { name, phone } });
  await Promise.all(
    Array.from({ length: CHANNELS }, (_, channel) =>
      survivor.expect(201, 'POST', '/api/external/messages', {
        apiKey: key,
        json: { from: { phone }, text: `Hello on c${channel}`, channel: `c${channel}` },
      }),
    ),
  );
  return contact;
}

/**
 * Sends `path` to process A, kills it at a random moment once `started` sees the operation's record (or after 10 s),
 * and starts it again on the same port.
 */
async function killDuring(path, json, started) {
  const a = client(0);
  const answer = a.call('POST', path, { token: company.token, json }).catch((error) => ({ status: 'cut', error }));
  await waitUntil(started, 10_000, 'the operation to start').catch(() => undefined);
  await sleep(Math.floor(Math.random() * 300));
  await apis[0].process.kill();
  const status = (await answer).status;
  apis[0].process = await startApi({ port: apis[0].port, mongodbUri });
  return status;
}

async function checkNoLocks(ids, round) {
  const locked = await db.collection('contacts').countDocuments({ companyId, _id: { $in: ids }, mergeLock: { $exists: true } });
  if (locked) violation(`round ${round}: ${locked} contact(s) left locked`);
}

async function loggedFor(type, mergeId) {
  return db.collection('events').countDocuments({ companyId, type, 'data.mergeId': mergeId });
}

let finished = 0;
let neverStarted = 0;
let cutShort = 0;
for (let round = 1; round <= ROUNDS; round += 1) {
  const target = await contactWithConversations(`Target ${round}`, `+1415600${String(round).padStart(4, '0')}`);
  const source = await contactWithConversations(`Source ${round}`, `+1415700${String(round).padStart(4, '0')}`);
  const ids = [new ObjectId(target.id), new ObjectId(source.id)];

  const mergeStatus = await killDuring('/v1/contacts/merge', { targetId: target.id, sourceIds: [source.id] }, () =>
    db.collection('contact_merges').findOne({ companyId, targetId: ids[0] }),
  );
  const merge = await waitUntil(
    async () => {
      const record = await db.collection('contact_merges').findOne({ companyId, targetId: ids[0] });
      const locked = await db.collection('contacts').countDocuments({ companyId, _id: { $in: ids }, mergeLock: { $exists: true } });
      if (!record) return locked === 0 && { status: 'none' };
      return record.status === 'done' && locked === 0 && record;
    },
    RECOVERY_TIMEOUT_MS,
    `round ${round}: the merge to finish or be gone`,
  );
  if (merge.status === 'none') {
    neverStarted += 1;
    const stored = await db.collection('contacts').findOne({ companyId, _id: ids[1] });
    if (stored.mergedInto || !stored.phone) violation(`round ${round}: a merge without a record changed its source`);
    if (mergeStatus === 200) violation(`round ${round}: a merge answered 200 but left no record`);
    continue;
  }
  finished += 1;
  if (mergeStatus !== 200) cutShort += 1;
  const mergeId = merge._id.toHexString();
  const gone = await survivor.call('GET', `/v1/contacts/${source.id}`, { token: company.token });
  if (gone.status !== 410 || gone.json?.mergedInto !== target.id) violation(`round ${round}: the merged source answers ${gone.status}`);
  const left = await db.collection('conversations').countDocuments({ companyId, contactId: ids[1] });
  if (left) violation(`round ${round}: ${left} conversation(s) left on the source`);
  const open = await db.collection('conversations').countDocuments({ companyId, contactId: ids[0], isOpen: true });
  if (open !== CHANNELS) violation(`round ${round}: the target has ${open} open conversations, not one per channel (${CHANNELS})`);
  if ((await loggedFor('contact.merged', mergeId)) !== 1) violation(`round ${round}: contact.merged is not logged exactly once`);
  await checkNoLocks(ids, round);

  await killDuring(`/v1/contacts/merges/${mergeId}/undo`, {}, () =>
    db.collection('contact_merges').findOne({ companyId, _id: merge._id, status: { $ne: 'done' } }),
  );
  const undone = await waitUntil(
    async () => {
      const record = await db.collection('contact_merges').findOne({ companyId, _id: merge._id });
      return (record.status === 'undone' || record.status === 'done') && record;
    },
    RECOVERY_TIMEOUT_MS,
    `round ${round}: the undo to finish or be refused`,
  );
  if (undone.status === 'undone') {
    const back = await survivor.call('GET', `/v1/contacts/${source.id}`, { token: company.token });
    if (back.status !== 200 || back.json.phone !== source.phone)
      violation(`round ${round}: the undone source answers ${back.status} ${back.text.slice(0, 200)}`);
    const returned = await db.collection('conversations').countDocuments({ companyId, contactId: ids[1] });
    if (returned !== CHANNELS) violation(`round ${round}: ${returned} of the source's ${CHANNELS} conversations came back`);
    if ((await loggedFor('contact.merge_undone', mergeId)) !== 1) violation(`round ${round}: contact.merge_undone is not logged exactly once`);
  } else {
    const still = await db.collection('contacts').findOne({ companyId, _id: ids[1] });
    if (!still.mergedInto) violation(`round ${round}: an undo that did not start changed the source`);
  }
  await checkNoLocks(ids, round);
}

console.log(
  `Contact merge crash drill: ${ROUNDS} rounds, ${finished} merges finished after a kill (${cutShort} of them cut short), ${neverStarted} never started; ${violations.length} violation(s)`,
);
await mongo.close();
for (const api of apis) await api.process.stop();
await engine.stop();
process.exit(violations.length ? 1 : 0);
