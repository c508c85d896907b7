// Benchmark of the embedded engine (a script, not a test): the app's list-page query through Mongoose,
// find({ companyId, status }).sort({ createdAt: -1 }).limit(50), on 1 000 and on 100 000 documents.
// With the compound index the page must cost about the same on both: the target is 100k within 2x of 1k.
// Both data sets are loaded first (two engines, two connections), then pages are timed in alternating rounds, so
// background load on the machine and garbage collection affect both sizes alike.
// Run: npm run bench:engine   (builds, then runs this file against dist/ with --expose-gc)
import mongoose from 'mongoose';
import { startEmbeddedMongo } from '../dist/index.js';

/** The p-th percentile (0..100) of numbers, nearest rank. */
function percentile(values, p) {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const COMPANIES = 4; // 4 companies x 4 statuses: 62 matches per page query at 1 000 docs, 6 250 at 100 000
const STATUSES = ['bot', 'queued', 'human', 'closed'];
const WARMUP = 200;
const ROUNDS = 40;
const PAGES_PER_ROUND = 50;

const schema = new mongoose.Schema(
  {
    companyId: { type: mongoose.Schema.Types.ObjectId, required: true },
    status: { type: String, required: true },
    subject: String,
    tags: [String],
    priority: String,
    assignedAgentId: { type: mongoose.Schema.Types.ObjectId, default: null },
    lastMessageAt: Date,
  },
  { timestamps: true },
);
schema.index({ companyId: 1, status: 1, createdAt: -1 });

async function load(size) {
  const engine = await startEmbeddedMongo();
  const conn = await mongoose.createConnection(`${engine.uri}bench`).asPromise();
  const Conversation = conn.model('Conversation', schema);
  await Conversation.init();
  const companies = Array.from({ length: COMPANIES }, () => new mongoose.Types.ObjectId());
  const start = Date.UTC(2024, 0, 1);
  const seedStart = performance.now();
  for (let from = 0; from < size; from += 5000) {
    const batch = [];
    for (let i = from; i < Math.min(size, from + 5000); i++) {
      const createdAt = new Date(start + i * 1000);
      batch.push({
        companyId: companies[i % COMPANIES],
        status: STATUSES[Math.floor(i / COMPANIES) % STATUSES.length],
        subject: `Conversation ${i}`,
        tags: i % 3 ? ['support'] : ['sales', 'vip'],
        priority: 'medium',
        lastMessageAt: createdAt,
        createdAt,
        updatedAt: createdAt,
      });
    }
    await Conversation.collection.insertMany(batch);
  }
  const seedMs = performance.now() - seedStart;
  const page = (i) =>
    Conversation.find({ companyId: companies[i % COMPANIES], status: STATUSES[(i >> 2) % STATUSES.length] })
      .sort({ createdAt: -1 })
      .limit(50);
  return { size, seedMs, page, times: [], close: async () => (await conn.close(), await engine.stop()) };
}

async function timePages(set, count, record) {
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const docs = await set.page(set.times.length + i);
    const ms = performance.now() - t0;
    if (docs.length !== 50) throw new Error(`expected a page of 50, got ${docs.length}`);
    if (record) set.times.push(ms);
  }
}

const sets = [await load(1_000), await load(100_000)];
try {
  // Collect the seeding garbage (with --expose-gc) so it is not charged to the measured pages.
  globalThis.gc?.();
  for (const set of sets) await timePages(set, WARMUP, false);
  for (let round = 0; round < ROUNDS; round++) for (const set of round % 2 ? [...sets].reverse() : sets) await timePages(set, PAGES_PER_ROUND, true);
} finally {
  for (const set of sets) await set.close();
}

const [small, large] = sets.map((s) => ({ size: s.size, seedMs: s.seedMs, median: percentile(s.times, 50), p99: percentile(s.times, 99) }));
const fmt = (n) => n.toFixed(3).padStart(8);
console.log('Embedded engine: Mongoose page find({companyId, status}).sort({createdAt:-1}).limit(50)');
console.log(`${ROUNDS * PAGES_PER_ROUND} pages per size in alternating rounds of ${PAGES_PER_ROUND}; index { companyId: 1, status: 1, createdAt: -1 }`);
console.log('    docs   median ms     p99 ms   load s');
for (const r of [small, large]) console.log(`${String(r.size).padStart(8)}    ${fmt(r.median)}   ${fmt(r.p99)}   ${(r.seedMs / 1000).toFixed(2).padStart(6)}`);
const ratio = large.median / small.median;
console.log(`ratio of medians (100 000 / 1 000): ${ratio.toFixed(2)} (target <= 2): ${ratio <= 2 ? 'OK' : 'TOO SLOW'}`);
console.log(`ratio of p99 (100 000 / 1 000): ${(large.p99 / small.p99).toFixed(2)}`);
process.exitCode = ratio <= 2 ? 0 : 1;
