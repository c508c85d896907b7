// Engine crash drill: 20 lanes write through the driver to a standalone engine on a data directory (inserts under a
// unique index, updates that also move the unique key, deletes, and duplicates that must be refused), the engine is
// killed with SIGKILL mid-way and restarted on the same directory, three times. After each restart every acknowledged
// write must be there, nothing unacknowledged may appear but the one write per lane in flight at the kill (either
// state is allowed for it), and the unique index must hold. A small journal size limit makes snapshots and journal
// rotations happen during the run, so kills land around them too. Exits 1 on a violation.
// Run: npm run drill -- engine-crash   (or node drill/engine-crash.mjs after npm run build)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MongoClient } from 'mongodb';
import { startEngine } from './lib/engine.mjs';

const LANES = 20;
const CYCLES = 3;
const ACKS_BEFORE_KILL = [1500, 2500, 4000];
const JOURNAL_SIZE_LIMIT = '256k';
const DUPLICATE_EVERY = 7;

const dataDir = mkdtempSync(join(tmpdir(), 'parley-engine-crash-'));
const violations = [];
const totals = { inserts: 0, updates: 0, deletes: 0, duplicatesRefused: 0, inFlight: 0, inFlightApplied: 0, verified: 0 };

/** What each document must be after a restart: id → { email, v } for a live one, null for a deleted one. */
const expected = new Map();
const random = (n) => Math.floor(Math.random() * n);

async function connect(engine) {
  const client = await MongoClient.connect(`${engine.uri}/drill`, { maxPoolSize: LANES + 5, serverSelectionTimeoutMS: 5000 });
  return { client, docs: client.db().collection('docs') };
}

/**
 * One lane: its own documents (`L<lane>-<n>`), one operation in flight at a time. Stops at the first network error
 * (the kill); that operation is the lane's in-flight one, whose outcome is unknown.
 */
async function lane(index, docs, state) {
  const live = [...expected.entries()].filter(([id, doc]) => doc && id.startsWith(`L${index}-`)).map(([id]) => id);
  let next = [...expected.keys()].filter((id) => id.startsWith(`L${index}-`)).length;
  for (let op = 0; !state.killing; op++) {
    let action;
    if (op % DUPLICATE_EVERY === DUPLICATE_EVERY - 1 && live.length) {
      const other = expected.get(live[random(live.length)]);
      action = { kind: 'duplicate', run: () => docs.insertOne({ _id: `dup-${index}-${op}`, email: other.email, v: 0 }) };
    } else if (op % 5 === 4 && live.length > 5) {
      const id = live.splice(random(live.length), 1)[0];
      action = { kind: 'delete', id, before: expected.get(id), after: null, run: () => docs.deleteOne({ _id: id }) };
    } else if (op % 3 === 2 && live.length) {
      const id = live[random(live.length)];
      const before = expected.get(id);
      const after = { email: op % 2 ? `${id}-v${before.v + 1}@drill` : before.email, v: before.v + 1 };
      action = { kind: 'update', id, before, after, run: () => docs.updateOne({ _id: id }, { $set: after }) };
    } else {
      const id = `L${index}-${next++}`;
      const after = { email: `${id}@drill`, v: 0 };
      action = { kind: 'insert', id, before: null, after, run: () => docs.insertOne({ _id: id, ...after }) };
    }
    try {
      await action.run();
    } catch (error) {
      if (action.kind === 'duplicate' && error.code === 11000) {
        state.counts.duplicatesRefused += 1;
        continue;
      }
      if (state.killing || error.name === 'MongoNetworkError' || error.name === 'MongoServerSelectionError') {
        if (action.id) state.inFlight.push(action);
        return;
      }
      violations.push(`lane ${index}: ${action.kind} ${action.id ?? ''} failed: ${error.message}`);
      return;
    }
    if (action.kind === 'duplicate') {
      violations.push(`lane ${index}: a duplicate email was accepted (${action.kind})`);
      continue;
    }
    expected.set(action.id, action.after);
    if (action.kind === 'insert') live.push(action.id);
    state.counts[`${action.kind}s`] += 1;
    state.acks += 1;
    if (state.acks >= state.killAfter && !state.killing) state.killing = state.kill();
  }
}

const same = (stored, doc) => (stored === null ? doc === null : doc !== null && stored.email === doc.email && stored.v === doc.v);

/** Compares the restarted engine with what was acknowledged; settles the in-flight writes to what was found. */
async function verify(docs, inFlight, cycle) {
  const stored = new Map((await docs.find().toArray()).map((doc) => [doc._id, doc]));
  const pending = new Map(inFlight.map((action) => [action.id, action]));
  for (const [id, doc] of expected) {
    if (pending.has(id)) continue;
    if (!same(stored.get(id) ?? null, doc)) violations.push(`cycle ${cycle}: ${id} should be ${JSON.stringify(doc)}, is ${JSON.stringify(stored.get(id) ?? null)}`);
  }
  let applied = 0;
  for (const action of inFlight) {
    const found = stored.get(action.id) ?? null;
    if (same(found, action.after)) applied += 1;
    else if (!same(found, action.before)) violations.push(`cycle ${cycle}: in-flight ${action.kind} of ${action.id} left ${JSON.stringify(found)}`);
    expected.set(action.id, found && { email: found.email, v: found.v });
  }
  for (const id of stored.keys()) if (!expected.has(id)) violations.push(`cycle ${cycle}: ${id} was never acknowledged but is stored`);
  const emails = [...stored.values()].map((doc) => doc.email);
  if (new Set(emails).size !== emails.length) violations.push(`cycle ${cycle}: ${emails.length - new Set(emails).size} duplicate emails stored`);
  const indexes = await docs.listIndexes().toArray();
  if (!indexes.some((index) => index.name === 'email_1' && index.unique)) violations.push(`cycle ${cycle}: the unique index is gone`);
  const someone = [...stored.values()][0];
  if (someone) {
    const duplicate = await docs.insertOne({ _id: `after-restart-${cycle}`, email: someone.email }).then(
      () => 'accepted',
      (error) => error.code,
    );
    if (duplicate !== 11000) violations.push(`cycle ${cycle}: a duplicate email after the restart was ${duplicate === 'accepted' ? 'accepted' : `refused with ${duplicate}`}`);
  }
  return { stored: stored.size, applied };
}

async function main() {
  let engine = await startEngine({ dataDir, args: ['--journal-size-limit', JOURNAL_SIZE_LIMIT] });
  let { client, docs } = await connect(engine);
  await docs.createIndex({ email: 1 }, { unique: true });
  const started = Date.now();
  console.log(`${LANES} lanes against an engine on ${dataDir} (journal size limit ${JOURNAL_SIZE_LIMIT}), ${CYCLES} kill -9 cycles`);
  for (let cycle = 1; cycle <= CYCLES; cycle++) {
    const state = { acks: 0, killAfter: ACKS_BEFORE_KILL[cycle - 1], killing: undefined, kill: () => engine.kill(), inFlight: [], counts: { inserts: 0, updates: 0, deletes: 0, duplicatesRefused: 0 } };
    await Promise.all(Array.from({ length: LANES }, (_, index) => lane(index, docs, state)));
    await state.killing;
    await client.close().catch(() => {});
    const restartedAt = Date.now();
    engine = await startEngine({ dataDir, args: ['--journal-size-limit', JOURNAL_SIZE_LIMIT] });
    const restartMs = Date.now() - restartedAt;
    ({ client, docs } = await connect(engine));
    const { stored, applied } = await verify(docs, state.inFlight, cycle);
    await docs.deleteOne({ _id: `after-restart-${cycle}` });
    const recovered = /recovered .*/.exec(engine.output())?.[0] ?? 'no recovery line';
    console.log(
      `cycle ${cycle}: killed after ${state.acks} acknowledged writes (${state.counts.inserts} inserts, ${state.counts.updates} updates, ` +
        `${state.counts.deletes} deletes; ${state.counts.duplicatesRefused} duplicates refused); ${state.inFlight.length} in flight, ${applied} of them applied; ` +
        `restarted in ${restartMs} ms; ${stored} documents checked\n  engine: ${recovered}`,
    );
    for (const key of ['inserts', 'updates', 'deletes', 'duplicatesRefused']) totals[key] += state.counts[key];
    totals.inFlight += state.inFlight.length;
    totals.inFlightApplied += applied;
    totals.verified += stored;
  }
  await client.close();
  await engine.stop();
  rmSync(dataDir, { recursive: true, force: true });
  const acknowledged = totals.inserts + totals.updates + totals.deletes;
  console.log(
    `\nEngine crash drill (${((Date.now() - started) / 1000).toFixed(1)} s): ${acknowledged} acknowledged writes (${totals.inserts} inserts, ` +
      `${totals.updates} updates, ${totals.deletes} deletes), ${totals.duplicatesRefused} duplicates refused, ${totals.inFlight} writes in flight at the kills ` +
      `(${totals.inFlightApplied} applied), ${totals.verified} document checks, ${violations.length} violations`,
  );
  if (violations.length) {
    console.log(`\nVIOLATIONS:\n  ${violations.slice(0, 20).join('\n  ')}`);
    process.exit(1);
  }
  console.log('\nEngine crash drill passed.');
}

await main();
