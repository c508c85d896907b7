import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildOpenApiDocument } from '../../src/swagger.js';
import { createTestApp } from '../support/test-app.js';

const run = promisify(execFile);
/**
 * Spectral checks every example against its schema across the 2 MB document: 11 s alone on an idle 2-core machine,
 * over 30 s beside the suite's other worker on a busy one.
 */
const SPECTRAL_TIMEOUT_MS = 120_000;

/** Runs a linter's CLI; both exit non-zero on findings, which is the report this test wants to read. */
async function lint(command: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await run(join('node_modules', '.bin', command), args, { maxBuffer: 16 * 1024 * 1024 });
    return stdout;
  } catch (error) {
    const { stdout } = error as { stdout?: string };
    if (!stdout) throw error;
    return stdout;
  }
}

describe('the OpenAPI document passes both linters without an error or a warning', () => {
  let dir: string;
  let file: string;

  beforeAll(async () => {
    const t = await createTestApp();
    try {
      dir = await mkdtemp(join(tmpdir(), 'parley-openapi-'));
      file = join(dir, 'openapi.json');
      await writeFile(file, JSON.stringify(buildOpenApiDocument(t.app)));
    } finally {
      await t.close();
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('Redocly (recommended rules)', async () => {
    const report = JSON.parse(await lint('redocly', ['lint', file, '--format=json'])) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.ruleId} at ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it(
    'Spectral (spectral:oas, .spectral.yaml)',
    async () => {
      const findings = JSON.parse(await lint('spectral', ['lint', file, '--format=json', '--ruleset=.spectral.yaml', '--quiet'])) as {
        code: string;
        message: string;
        path: string[];
        severity: number;
      }[];
      // Severity 0 is an error, 1 a warning; hints and infos are not counted.
      const problems = findings.filter((f) => f.severity <= 1).map((f) => `${f.code} at ${f.path.join('.')}: ${f.message}`);
      expect(problems).toEqual([]);
    },
    SPECTRAL_TIMEOUT_MS,
  );
});
