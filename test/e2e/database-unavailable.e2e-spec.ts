import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';

/** A TCP relay to the engine that can be cut and restored on the same port, as a database goes away and comes back. */
class DatabaseLink {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: number) {}

  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.sockets.forEach((socket) => socket.destroy());
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

describe('the database unreachable', () => {
  let engine: EmbeddedMongo;
  let link: DatabaseLink;
  let t: TestApp;
  let company: TestCompany;
  let key: string;

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    link = new DatabaseLink(Number(new URL(engine.uri).port));
    await link.up();
    t = await createTestApp({ env: { MONGODB_URI: `mongodb://127.0.0.1:${link.port}/unreachable` } });
    company = await registerCompany(t.http, 'Unreachable');
    key = await createApiKey(t.http, company, ['messages:write']);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await link?.cut();
    await engine?.stop();
  }, 60_000);

  it('answers 503 with Retry-After on both interfaces while it is gone, and serves the same requests once it is back', async () => {
    const inboundMessage = () =>
      t.http
        .post('/api/external/messages')
        .set('x-api-key', key)
        .send({ from: { phone: '+14155550100' }, text: 'Hello?' });
    await link.cut();
    const [inbound, agent] = await Promise.all([inboundMessage(), t.http.get('/v1/conversations').set(company.auth)]);
    expect(inbound.status).toBe(503);
    expect(inbound.headers['retry-after']).toBe('5');
    expect(inbound.body).toEqual({ success: false, error: 'The database is unavailable; try again shortly' });
    expect(agent.status).toBe(503);
    expect(agent.headers['retry-after']).toBe('5');
    expect(agent.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(agent.body).toMatchObject({ status: 503, title: 'Service Unavailable', detail: 'The database is unavailable; try again shortly' });

    await link.up();
    await waitFor(async () => (await t.http.get('/health')).status === 200, { timeoutMs: 30_000, message: 'the app to reach the database again' });
    await inboundMessage().expect(201);
    const conversations = await t.http.get('/v1/conversations').set(company.auth).expect(200);
    expect(conversations.body.data).toHaveLength(1);
  }, 60_000);
});
