import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { registerCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';

/** Compiling the examples takes a while on a busy machine. */
const COMMAND_TIMEOUT_MS = 240_000;

interface Run {
  child: ChildProcess;
  output: () => string;
  /** The exit code, once every process of the command is gone: npm and what it started (they share its pipes). */
  closed: Promise<number | null>;
  isClosed: () => boolean;
}

/** Every command started, stopped at the end of the file if a test gave up on it. */
const runs: Run[] = [];

/** `npm run <script>`, as the docs tell a reader to type it, in its own process group (so that it can be stopped whole). */
function npmRun(script: string, args: string[], env: Record<string, string>): Run {
  const child = spawn('npm', ['run', '--silent', script, ...(args.length ? ['--', ...args] : [])], {
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let isClosed = false;
  const closed = once(child, 'close').then(([code]) => {
    isClosed = true;
    return code as number | null;
  });
  const run = { child, output: () => output, closed, isClosed: () => isClosed };
  runs.push(run);
  return run;
}

/** Stops a command still running (its whole process group: npm, the shell and node), and waits until all are gone. */
async function stop(run: Run): Promise<void> {
  try {
    if (!run.isClosed()) process.kill(-run.child.pid!, 'SIGTERM');
  } catch (error) {
    // The last of them ended between the check and the signal.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
  await run.closed;
}

const exitCode = (run: Run) => run.closed;

describe('the example commands of the docs', () => {
  afterAll(() => Promise.all(runs.map(stop)));

  it(
    '`npm run example:client` lists the queue and answers the conversation waiting longest',
    async () => {
      const t: TestApp = await createTestApp();
      try {
        await t.app.listen(0, '127.0.0.1');
        const acme = await registerCompany(t.http, 'Acme');
        const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Grace Hopper' }).expect(201);
        const conversation = (await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id }).expect(201)).body.id;
        await t.http.patch(`/v1/conversations/${conversation}`).set(acme.auth).send({ status: 'queued' }).expect(200);
        const { port } = t.app.getHttpServer().address() as AddressInfo;

        const run = npmRun('example:client', ['On it!'], { PARLEY_URL: `http://127.0.0.1:${port}`, PARLEY_TOKEN: acme.token });
        expect({ code: await exitCode(run), output: run.output() }).toEqual({
          code: 0,
          output: expect.stringMatching(/^Grace Hopper, waiting since \d{4}-.*\nAnswered Grace Hopper as Acme Admin\n$/),
        });
        const messages = await t.http.get(`/v1/conversations/${conversation}/messages`).set(acme.auth).expect(200);
        expect(messages.body.data).toEqual([expect.objectContaining({ text: 'On it!', direction: 'outbound' })]);

        const refused = npmRun('example:client', [], { PARLEY_URL: `http://127.0.0.1:${port}`, PARLEY_TOKEN: 'not-a-token' });
        expect({ code: await exitCode(refused), output: refused.output() }).toEqual({ code: 1, output: expect.stringMatching(/^401 /) });
      } finally {
        await t.close();
      }
    },
    COMMAND_TIMEOUT_MS,
  );

  describe('`npm run example:digests` serves Parley with the example module', () => {
    let run: Run;
    let baseUrl: string;
    let auth: { Authorization: string };

    beforeAll(async () => {
      run = npmRun('example:digests', [], { NODE_ENV: 'development', PORT: '0', EMBEDDED_DATA_DIR: 'memory', LOG_LEVEL: 'silent' });
      // The demo company's credentials, printed once the server listens.
      const printed = await waitFor(
        () => {
          if (run.child.exitCode !== null) throw new Error(`exited with ${run.child.exitCode}:\n${run.output()}`);
          return /Authorization: (Bearer \S+)[\s\S]*Swagger UI: (http:\/\/localhost:\d+)\/docs/.exec(run.output());
        },
        { timeoutMs: COMMAND_TIMEOUT_MS - 20_000, intervalMs: 200, message: 'the demo credentials to be printed' },
      );
      auth = { Authorization: printed[1] };
      baseUrl = printed[2];
    }, COMMAND_TIMEOUT_MS);

    afterAll(() => stop(run));

    it('validates and runs the extension step type, and documents it', async () => {
      const health = await fetch(`${baseUrl}/health`);
      expect(health.status).toBe(200);
      const flow = await fetch(`${baseUrl}/v1/flows`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Wrap up', steps: [{ type: 'set_subject', subject: 'Refund request' }] }),
      });
      expect({ status: flow.status, body: await flow.json() }).toEqual({
        status: 201,
        body: expect.objectContaining({ steps: [{ type: 'set_subject', subject: 'Refund request' }] }),
      });
      const document = (await (await fetch(`${baseUrl}/docs-json`)).json()) as { components: { schemas: Record<string, unknown> } };
      expect(document.components.schemas).toHaveProperty('SetSubjectStepDto');
    });
  });
});
