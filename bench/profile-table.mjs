// The self time of a V8 CPU profile (`npm run bench -- --cpu-prof` writes them into bench/profiles/), as
// Markdown tables by package and by function, over the whole profile or one time window of it:
//   node bench/profile-table.mjs <file.cpuprofile> [--from <s>] [--to <s>] [--top <n>] [--timeline]
// Seconds count from the profile's start; --timeline prints the busy samples per second first, so that a
// scenario's window can be found (the bench runs each scenario for --duration seconds in turn).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    from: { type: 'string', default: '0' },
    to: { type: 'string', default: 'Infinity' },
    top: { type: 'string', default: '30' },
    timeline: { type: 'boolean', default: false },
  },
});
if (positionals.length !== 1) throw new Error('usage: node bench/profile-table.mjs <file.cpuprofile> [--from s] [--to s] [--top n] [--timeline]');
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const isIdle = (node) => node.callFrame.functionName === '(idle)';

/** Each sample with its second since the profile's start. */
const samples = [];
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  at += profile.timeDeltas[i];
  samples.push({ node: nodes.get(id), second: (at - profile.startTime) / 1e6 });
});

if (options.timeline) {
  const busy = [];
  for (const { node, second } of samples) if (!isIdle(node)) busy[Math.floor(second)] = (busy[Math.floor(second)] ?? 0) + 1;
  console.log(`busy samples per second: ${Array.from(busy, (count, second) => `${second}:${count ?? 0}`).join(' ')}\n`);
}

const from = Number(options.from);
const to = Number(options.to);
const byFunction = new Map();
const byPackage = new Map();
let busy = 0;
let idle = 0;
const add = (map, key) => map.set(key, (map.get(key) ?? 0) + 1);
for (const { node, second } of samples) {
  if (second < from || second > to) continue;
  if (isIdle(node)) {
    idle++;
    continue;
  }
  busy++;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/dist\//, 'dist/');
  add(byFunction, `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim());
  add(byPackage, packageOf(url));
}

/** node_modules package, Node.js module, app directory under dist/, or V8 itself (GC, native code). */
function packageOf(url) {
  if (!url) return '(native: GC, system calls, V8)';
  const dependency = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (dependency) return dependency[1];
  if (url.startsWith('node:')) return url.split('/')[0];
  const app = url.match(/\/dist\/(.+)\/[^/]+$/);
  return app ? `app: ${app[1]}` : url;
}

const table = (title, map) => {
  console.log(`| self % | ${title} |\n|---:|---|`);
  for (const [key, count] of [...map].sort((a, b) => b[1] - a[1]).slice(0, Number(options.top))) {
    console.log(`| ${((100 * count) / busy).toFixed(1)} | ${key} |`);
  }
  console.log();
};
console.log(`${busy} busy samples (${idle} idle) from ${from} s to ${to} s\n`);
table('package', byPackage);
table('function', byFunction);
