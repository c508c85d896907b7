// MongoDB's unified-format specification tests (CRUD, collection and index management, GridFS, versioned API,
// read/write concern, run-command) run through the official driver against an embedded engine started in this
// process. Prints per-file and per-group counts and a total line; exits non-zero when fewer than 95 % of the
// applicable tests pass or a test of must-pass.json fails. must-pass.json maps "group/file.json" to "*" (every
// applicable test of the file) or to a list of test descriptions (each must run and pass): the files covering what
// the engine was fixed for (let, sort, dots and dollars, collation, $out/$merge, pipelines, Stable API, collection
// options, views, capped collections).
//
// Run: npm run test:mongo-spec [-- [--verbose] [path-substring ...]]
// The tests are read from MONGO_SPEC_DIR (relative to where npm was started), by default
// <repository>/../shared/mongo-spec. They are test data under their own licence and are never copied into this repository.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MongoClient } from 'mongodb';
import { startEmbeddedMongo } from '../../dist/index.js';
import { parseTestFile } from './match.mjs';
import { runFile } from './runner.mjs';
import { schemaUnsupported } from './requirements.mjs';

const TARGET = 0.95;
const GROUPS = ['crud', 'collection-management', 'index-management', 'gridfs', 'versioned-api', 'read-write-concern', 'run-command'];

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '../../../..');
// npm runs the package's scripts in the package's folder; INIT_CWD is where `npm run` was typed (e.g. the repository root).
const specDir = path.resolve(process.env.INIT_CWD ?? process.cwd(), process.env.MONGO_SPEC_DIR ?? path.join(repoRoot, '../shared/mongo-spec'));
const argv = process.argv.slice(2);
const verbose = argv.includes('--verbose');
const filters = argv.filter((a) => !a.startsWith('--'));

function jsonFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = path.join(dir, name);
      return statSync(full).isDirectory() ? jsonFiles(full) : name.endsWith('.json') ? [full] : [];
    });
}

const mustPass = JSON.parse(readFileSync(path.join(here, 'must-pass.json'), 'utf8'));

/** Whether a test is on the must-pass list ("group/file.json": "*" for every applicable test, or a list of descriptions). */
const isMustPass = (key, description) => mustPass[key] === '*' || (Array.isArray(mustPass[key]) && mustPass[key].includes(description));

async function main() {
  if (!existsSync(specDir)) {
    console.error(`mongo-spec: no specification tests at ${specDir} (set MONGO_SPEC_DIR)`);
    process.exit(2);
  }
  const engine = await startEmbeddedMongo();
  const internal = await new MongoClient(engine.uri).connect();
  const parameterCache = new Map();
  const parameters = async (name) => {
    if (!parameterCache.has(name)) {
      const value = await internal.db('admin').command({ getParameter: 1, [name]: 1 }).then((r) => r[name], () => undefined);
      parameterCache.set(name, value);
    }
    return parameterCache.get(name);
  };

  const totals = { passed: 0, failed: 0, skipped: 0 };
  const skipReasons = new Map();
  const mustPassFailures = [];
  const seenMustPass = new Set();
  const groupLines = [];
  try {
    for (const group of GROUPS) {
      const files = jsonFiles(path.join(specDir, group)).filter((f) => !filters.length || filters.some((s) => path.relative(specDir, f).includes(s)));
      if (!files.length) continue;
      const groupTotals = { passed: 0, failed: 0, skipped: 0 };
      for (const full of files) {
        const key = `${group}/${path.basename(full)}`;
        const file = parseTestFile(readFileSync(full, 'utf8'));
        const unsupported = schemaUnsupported(file);
        const results = unsupported
          ? file.tests.map((t) => ({ description: t.description, status: 'failed', reason: unsupported }))
          : await runFile(file, { uri: engine.uri, internal, parameters });
        const counts = { passed: 0, failed: 0, skipped: 0 };
        for (const r of results) {
          counts[r.status]++;
          if (r.status === 'skipped') skipReasons.set(r.reason, (skipReasons.get(r.reason) ?? 0) + 1);
          // "*" covers the file's applicable tests; a test listed by name must run and pass.
          const wholeFile = mustPass[key] === '*';
          if (isMustPass(key, r.description) && !(wholeFile && r.status === 'skipped')) {
            seenMustPass.add(`${key}#${r.description}`);
            if (r.status !== 'passed') mustPassFailures.push(`${key}: ${r.description} (${r.status}${r.reason ? `: ${r.reason}` : ''})`);
          }
        }
        for (const s of Object.keys(counts)) groupTotals[s] += counts[s];
        console.log(`${key.padEnd(62)} passed ${String(counts.passed).padStart(3)}  failed ${String(counts.failed).padStart(3)}  skipped ${String(counts.skipped).padStart(3)}`);
        if (verbose) for (const r of results) if (r.status === 'failed') console.log(`    FAIL ${r.description}\n         ${r.reason}`);
      }
      for (const s of Object.keys(totals)) totals[s] += groupTotals[s];
      groupLines.push(`${group.padEnd(22)} passed ${String(groupTotals.passed).padStart(3)} / ${String(groupTotals.passed + groupTotals.failed).padStart(3)} applicable, ${String(groupTotals.skipped).padStart(3)} skipped`);
    }
  } finally {
    await internal.close();
    await engine.stop();
  }

  for (const [key, list] of Object.entries(mustPass)) {
    if (filters.length && !filters.some((s) => key.includes(s))) continue;
    if (list === '*') {
      if (![...seenMustPass].some((k) => k.startsWith(`${key}#`))) mustPassFailures.push(`${key}: no applicable test of this file was found`);
    } else for (const d of list) if (!seenMustPass.has(`${key}#${d}`)) mustPassFailures.push(`${key}: ${d} (not found)`);
  }

  const applicable = totals.passed + totals.failed;
  const rate = applicable ? totals.passed / applicable : 1;
  console.log('\nby group:');
  for (const line of groupLines) console.log(`  ${line}`);
  console.log('skipped (not applicable to a standalone 7.0 server without fail points):');
  for (const [reason, n] of [...skipReasons].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(4)}  ${reason}`);
  for (const f of mustPassFailures) console.log(`MUST-PASS FAILED: ${f}`);
  console.log(`\ntotal: passed ${totals.passed}, failed ${totals.failed}, skipped ${totals.skipped}; ${(rate * 100).toFixed(1)} % of ${applicable} applicable tests passed (target ${TARGET * 100} %)`);
  if (filters.length) return;
  if (rate < TARGET || mustPassFailures.length) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
