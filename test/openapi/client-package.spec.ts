import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CLIENT = resolve('clients', 'typescript');
const TSC = resolve('node_modules', 'typescript', 'bin', 'tsc');
const NPM = process.env.npm_execpath;

/** npm, as the test was started with it (npm run test:jest) or from PATH. */
function npm(args: string[], cwd: string) {
  return NPM ? run(process.execPath, [NPM, ...args], { cwd }) : run('npm', args, { cwd });
}

/** What a scratch project writes against the package: typed calls that must compile, and calls that must not. */
const scratchSource = (baseUrl: string) => `
import { createParleyClient, type Schemas } from '@parley/client';

const parley = createParleyClient({ baseUrl: '${baseUrl}', apiKey: 'pk_test' });
// Optional fields stay optional: no channel, no externalId.
const body: Schemas['InboundMessageDto'] = { from: { phone: '+14155550100' }, text: 'Hi' };
// Compiled, never called: a query enum is typed.
export function wrongSort() {
  // @ts-expect-error 'sideways' is no sort order
  return parley.GET('/v1/conversations', { params: { query: { sort: 'sideways' } } });
}
const { data, error, response } = await parley.POST('/api/external/messages', { body });
console.log(JSON.stringify({ status: response.status, ok: data?.success === true, error: error ?? null }));
`;

describe('the @parley/client package (clients/typescript)', () => {
  let dir: string;
  let server: Server;
  let received: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'parley-client-package-'));
    received = [];
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        received.push({ method: request.method, url: request.url, headers: request.headers, body });
        response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, data: {} }));
      });
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await rm(dir, { recursive: true, force: true });
  });

  it('builds, packs, installs into a scratch project, type checks there and calls the API', async () => {
    // npm pack runs the package's build (prepack) and lists what the tarball holds.
    const { stdout } = await npm(['pack', '--json', '--pack-destination', dir], CLIENT);
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    expect(packed.files.map((file) => file.path).sort()).toEqual(
      expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'schema.d.ts', 'openapi.json', 'package.json']),
    );
    expect(packed.files.map((file) => file.path)).not.toContain('src/index.ts');

    const scratch = join(dir, 'scratch');
    await mkdir(scratch);
    await writeFile(join(scratch, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    // Its dependency (openapi-fetch) from npm's cache when it is there, else from the registry, as `npm ci` does.
    await npm(['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, packed.filename)], scratch);
    const { port } = server.address() as AddressInfo;
    await writeFile(join(scratch, 'main.ts'), scratchSource(`http://127.0.0.1:${port}`));
    const compilerOptions = ['--module', 'nodenext', '--target', 'es2022', '--strict', '--skipLibCheck', '--lib', 'es2022,dom'];
    await run(process.execPath, [TSC, ...compilerOptions, 'main.ts'], { cwd: scratch });

    const output = await run(process.execPath, ['main.js'], { cwd: scratch });
    expect(JSON.parse(output.stdout)).toEqual({ status: 201, ok: true, error: null });
    expect(received).toEqual([expect.objectContaining({ method: 'POST', url: '/api/external/messages' })]);
    expect(received[0].headers['x-api-key']).toBe('pk_test');
    expect(JSON.parse(received[0].body)).toEqual({ from: { phone: '+14155550100' }, text: 'Hi' });
  }, 180_000);
});
