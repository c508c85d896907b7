import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { applyHeapGrowth } from './heap-growth.js';

/**
 * A child process that applies `flags` at run time, as main does, keeps 300 000 objects alive while it churns
 * through short-lived ones, and prints the largest old space it reached (MiB).
 */
const PEAK_OLD_SPACE = `
const v8 = require('node:v8');
if (process.argv[1]) v8.setFlagsFromString(process.argv[1]);
const live = Array.from({ length: 300000 }, (_, i) => ({ i, s: 'x' + i }));
const ring = new Array(50000);
let peak = 0;
for (let round = 0; round < 3000000; round++) {
  ring[round % ring.length] = { round, a: [round, round + 1], s: 'y' + round };
  if (round % 10000 === 0) peak = Math.max(peak, v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space').space_size);
}
console.log(Math.round(peak / 1048576), live.length);
`;

const peakOldSpaceMiB = (flags: string): number =>
  Number(execFileSync(process.execPath, ['-e', PEAK_OLD_SPACE, flags], { encoding: 'utf8' }).split(' ')[0]);

describe('applyHeapGrowth', () => {
  it('sets the growing factor V8 uses, and leaves V8 its own for 0', () => {
    const set: string[] = [];
    applyHeapGrowth(150, (flags) => set.push(flags));
    applyHeapGrowth(0, (flags) => set.push(flags));
    expect(set).toEqual(['--heap-growing-percent=150']);
  });

  it('bounds the old space of a running process (V8 ignores a flag it does not know, so this is the check)', () => {
    const flagsFor = (percent: number): string => {
      let flags = '';
      applyHeapGrowth(percent, (set) => (flags = set));
      return flags;
    };
    const tight = peakOldSpaceMiB(flagsFor(10));
    const loose = peakOldSpaceMiB(flagsFor(400));
    // Measured: 82-91 against 170 MiB on Node.js 20, 115-160 against 218-223 MiB on Node.js 24.
    expect(tight).toBeLessThan(loose * 0.85);
  });
});

/** A child process that keeps a share of what it allocates alive a while, and prints its new space's size (MiB). */
const NEW_SPACE = `
const v8 = require('node:v8');
const kept = [];
let batch = [];
for (let i = 0; i < 2000000; i++) {
  batch.push({ i, s: 'x' + i, pair: [i, i] });
  if (batch.length === 20000) { kept.push(batch); batch = []; if (kept.length > 30) kept.shift(); }
}
console.log(Math.round(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576));
`;

describe('the young generation bound', () => {
  const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
  const dockerFlag = /NODE_OPTIONS=(--max-semi-space-size=\d+)/.exec(read('Dockerfile'))?.[1];

  it('is one flag in the Dockerfile, `npm start` and the bench', () => {
    expect(dockerFlag).toBe('--max-semi-space-size=16');
    const start = JSON.parse(read('package.json')).scripts.start as string;
    expect(start).toContain(`node ${dockerFlag} dist/main.js`);
    expect(read('bench/lib/app.mjs')).toContain(`export const APP_NODE_FLAGS = ['${dockerFlag}'];`);
  });

  it('holds the new space of the running Node.js at two 16 MiB semi-spaces (Node.js 24 grows it to 128 MiB without)', () => {
    const newSpaceMiB = Number(execFileSync(process.execPath, [dockerFlag as string, '-e', NEW_SPACE], { encoding: 'utf8' }));
    expect(newSpaceMiB).toBeGreaterThan(4);
    expect(newSpaceMiB).toBeLessThanOrEqual(32);
  });
});
