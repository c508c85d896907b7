import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { answerTheQueue } from '../../clients/typescript/example.js';
import { buildOpenApiDocument } from '../../src/swagger.js';
import { registerCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const run = promisify(execFile);
const CLIENT = join('clients', 'typescript');

describe('the TypeScript client (clients/typescript)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen(0, '127.0.0.1');
  });
  afterAll(() => t.close());

  it('has the types of the document the API serves (run `npm run client:generate` after changing the API)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'parley-client-'));
    try {
      const document = join(dir, 'served.json');
      await writeFile(document, JSON.stringify(buildOpenApiDocument(t.app)));
      await run(process.execPath, ['scripts/generate-client.mjs', '--document', document, '--out', dir]);
      for (const file of ['openapi.json', 'schema.d.ts']) {
        expect({ file, text: await readFile(join(CLIENT, file), 'utf8') }).toEqual({
          file,
          text: await readFile(join(dir, file), 'utf8'),
        });
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('runs its example against the API: every page of the queue, and the conversation waiting longest taken and answered', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const created: Record<string, string> = {};
    for (const name of ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'Edsger Dijkstra']) {
      const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ name }).expect(201);
      created[name] = (await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id }).expect(201)).body.id;
    }
    // Handed to the queue in another order than created: Grace waits longest, so `sort=waiting` puts her first, and
    // the queue spans two pages of 2.
    for (const name of ['Grace Hopper', 'Edsger Dijkstra', 'Ada Lovelace', 'Alan Turing']) {
      await t.http.patch(`/v1/conversations/${created[name]}`).set(acme.auth).send({ status: 'queued' }).expect(200);
    }
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const queue = await answerTheQueue(`http://127.0.0.1:${port}`, acme.token, 'Thanks for waiting!', 2);
      const waitingOrder = ['Grace Hopper', 'Edsger Dijkstra', 'Ada Lovelace', 'Alan Turing'];
      expect(queue.map((conversation) => conversation.contact?.name)).toEqual(waitingOrder);
      expect(log.mock.calls.map(([line]) => String(line))).toEqual([
        ...waitingOrder.map((name) => expect.stringMatching(new RegExp(`^${name}, waiting since \\d{4}-`))),
        'Answered Grace Hopper as Acme Admin',
      ]);
    } finally {
      log.mockRestore();
    }
    const answered = await t.http.get(`/v1/conversations/${created['Grace Hopper']}`).set(acme.auth).expect(200);
    expect(answered.body).toMatchObject({ status: 'human', assignedAgentId: acme.agentId });
    const messages = await t.http.get(`/v1/conversations/${created['Grace Hopper']}/messages`).set(acme.auth).expect(200);
    expect(messages.body.data).toEqual([expect.objectContaining({ text: 'Thanks for waiting!', direction: 'outbound' })]);
    for (const name of ['Ada Lovelace', 'Alan Turing', 'Edsger Dijkstra']) {
      expect((await t.http.get(`/v1/conversations/${created[name]}`).set(acme.auth).expect(200)).body.status).toBe('queued');
    }
    await expect(answerTheQueue(`http://127.0.0.1:${port}`, 'not-a-token', 'x')).rejects.toThrow(/^401 /);
  });
});
