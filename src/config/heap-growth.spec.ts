import { execFileSync } from 'node:child_process';
import { applyHeapGrowth } from './heap-growth.js';

describe('applyHeapGrowth', () => {
  it('sets the growing factor V8 uses, and leaves V8 its own for 0', () => {
    const set: string[] = [];
    applyHeapGrowth(150, (flags) => set.push(flags));
    applyHeapGrowth(0, (flags) => set.push(flags));
    expect(set).toEqual(['--heap-growing-percent=150']);
  });

  it('names a flag this Node.js knows', () => {
    // setFlagsFromString ignores an unknown flag silently: the running binary's list is the check.
    const flags = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    expect(flags).toMatch(/^\s*--heap-growing-percent\b/m);
  });
});
