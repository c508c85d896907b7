// Benchmark of the embedded engine (a script, not a test): the app's list-page query through Mongoose,
// find({ companyId, status }).sort({ createdAt: -1 }).limit(50), on 1 000 and on 100 000 documents.
// With the compound index the page must cost about the same on both: the target is 100k within 2x of 1k.
// Run: npm run bench:engine   (builds, then runs this file against dist/ with --expose-gc)
import mongoose from 'mongoose';
import { startEmbeddedMongo } from '../dist/embedded-mongo/index.js';

const COMPANIES = 4; // 4 companies x 4 statuses: 62 matches per page query at 1 000 docs, 6 250 at 100 000
const STATUSES = ['bot', 'queued', 'human', 'closed'];
const WARMUP = 100;
const RUNS = 2000;

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

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function measure(size) {
  const engine = await startEmbeddedMongo();
  const conn = await mongoose.createConnection(`${engine.uri}bench`).asPromise();
  try {
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
    // Collect the seeding garbage (with --expose-gc) so it is not charged to the measured pages.
    globalThis.gc?.();

    const page = (i) =>
      Conversation.find({ companyId: companies[i % COMPANIES], status: STATUSES[i % STATUSES.length] })
        .sort({ createdAt: -1 })
        .limit(50);
    for (let i = 0; i < WARMUP; i++) await page(i);
    const times = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      const docs = await page(i);
      times.push(performance.now() - t0);
      if (docs.length !== 50) throw new Error(`expected a page of 50, got ${docs.length}`);
    }
    times.sort((a, b) => a - b);
    return { size, seedMs, median: percentile(times, 50), p99: percentile(times, 99) };
  } finally {
    await conn.close();
    await engine.stop();
  }
}

// An unreported pass first, so both reported sizes run on JIT-compiled code.
await measure(1_000);
const small = await measure(1_000);
const large = await measure(100_000);
const fmt = (n) => n.toFixed(3).padStart(8);
console.log('Embedded engine: Mongoose page find({companyId, status}).sort({createdAt:-1}).limit(50)');
console.log(`${RUNS} pages per size after ${WARMUP} warm-up pages; index { companyId: 1, status: 1, createdAt: -1 }`);
console.log('    docs   median ms     p99 ms   seed s');
for (const r of [small, large]) console.log(`${String(r.size).padStart(8)}    ${fmt(r.median)}   ${fmt(r.p99)}   ${(r.seedMs / 1000).toFixed(2).padStart(6)}`);
const ratio = large.median / small.median;
console.log(`ratio of medians (100 000 / 1 000): ${ratio.toFixed(2)} (target <= 2): ${ratio <= 2 ? 'OK' : 'TOO SLOW'}`);
console.log(`ratio of p99 (100 000 / 1 000): ${(large.p99 / small.p99).toFixed(2)}`);
process.exitCode = ratio <= 2 ? 0 : 1;
