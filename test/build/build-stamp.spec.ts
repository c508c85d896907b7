import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isStampCurrent, writeStamp } from '../../scripts/build-stamp.mjs';

// The decision `npm start` takes for the OpenAPI metadata step: skip it when nothing it reads or writes changed.
describe('build stamp (scripts/build-stamp.mjs)', () => {
  let dir: string;
  let stamp: string;
  let files: string[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-build-stamp-'));
    stamp = join(dir, 'dist', '.step.stamp');
    files = [join(dir, 'a.dto.ts'), join(dir, 'b.view.ts'), join(dir, 'out.ts')];
    await writeFile(files[0], 'export class A {}');
    await writeFile(files[1], 'export class B {}');
    await writeFile(files[2], 'export default {};');
  });

  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('is not current before the step ever ran (no stamp)', () => {
    expect(isStampCurrent(stamp, files)).toBe(false);
  });

  it('is current after the step ran and nothing changed', () => {
    writeStamp(stamp, files);
    expect(isStampCurrent(stamp, files)).toBe(true);
  });

  it('is not current once an input changes, and is again once the step records it', async () => {
    writeStamp(stamp, files);
    await writeFile(files[0], 'export class A { name?: string }');
    expect(isStampCurrent(stamp, files)).toBe(false);
    writeStamp(stamp, files);
    expect(isStampCurrent(stamp, files)).toBe(true);
  });

  it('is not current when the output was edited or removed', async () => {
    writeStamp(stamp, files);
    await writeFile(files[2], 'export default { edited: true };');
    expect(isStampCurrent(stamp, files)).toBe(false);
    writeStamp(stamp, files);
    await rm(files[2]);
    expect(isStampCurrent(stamp, files)).toBe(false);
  });

  it('is not current when a file is added or renamed, even with the same contents', async () => {
    writeStamp(stamp, files);
    const added = join(dir, 'c.dto.ts');
    await writeFile(added, 'export class C {}');
    expect(isStampCurrent(stamp, [...files, added])).toBe(false);
    const renamed = join(dir, 'a2.dto.ts');
    await writeFile(renamed, 'export class A {}');
    expect(isStampCurrent(stamp, [renamed, files[1], files[2]])).toBe(false);
  });

  it('does not mistake contents moved from one file to the next for no change', async () => {
    await writeFile(files[0], 'ab');
    await writeFile(files[1], 'c');
    writeStamp(stamp, files);
    await writeFile(files[0], 'a');
    await writeFile(files[1], 'bc');
    expect(isStampCurrent(stamp, files)).toBe(false);
  });
});
