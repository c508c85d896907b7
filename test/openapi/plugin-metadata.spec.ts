import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('Swagger plugin metadata (src/openapi.metadata.ts)', () => {
  it('is what the plugin reads from the sources today (run `npm run openapi:metadata` after changing a DTO or view)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parley-openapi-metadata-'));
    try {
      await run(process.execPath, ['scripts/openapi-metadata.mjs', dir]);
      const fresh = await readFile(join(dir, 'openapi.metadata.ts'), 'utf8');
      const committed = await readFile('src/openapi.metadata.ts', 'utf8');
      expect(committed).toBe(fresh);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
