import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { EventStreamSlot } from '../../src/event-feed/event-stream-slot.schema.js';
import { EventStreams } from '../../src/event-feed/event-streams.service.js';
import { publishEvents } from '../support/event-feed.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { registerCompany, type TestCompany } from '../support/factories.js';
import { waitFor } from '../support/wait-for.js';

/** Debian's chromium, as the Swagger UI browser test uses it. */
const CHROMIUM = '/usr/bin/chromium';
const describeInBrowser = existsSync(CHROMIUM) || process.env.CI === 'true' ? describe : describe.skip;

/** The browser consumer of docs/events.md, on a page of the integrator's own origin. */
const PAGE = `<!doctype html><pre id="log"></pre><script>
const source = new EventSource('/parley/events/stream?types=flow.executed');
source.addEventListener('flow.executed', (frame) => {
  const event = JSON.parse(frame.data);
  document.querySelector('#log').append(event.id + '\\n');
});
</script>`;

/**
 * The integrator's backend: serves the page and proxies /parley/events/stream to a Parley process (`target`),
 * adding the bearer token, as docs/events.md says a browser consumer needs.
 */
function startProxy(company: TestCompany, target: () => string): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
      return;
    }
    const lastEventId = req.headers['last-event-id'];
    const upstream = request(`${target()}/v1/events${req.url!.slice('/parley/events'.length)}`, {
      headers: { ...company.auth, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    });
    upstream.on('response', (answer) => {
      res.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'text/plain' });
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    upstream.end();
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describeInBrowser('the event stream in a browser: EventSource through a same-origin proxy', () => {
  let deployment: Deployment;
  let browser: Browser;
  let proxy: Server;

  beforeAll(async () => {
    deployment = await startDeployment('eventbrowser', {});
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    proxy?.close();
    await deployment.stop();
  });

  it("receives the events, and when its process shuts down, reconnects to another with Last-Event-ID by itself: nothing missed, nothing twice", async () => {
    const [first, second] = deployment.apps;
    const acme = await registerCompany(first.http, 'Acme');
    let target = deployment.bases[0];
    proxy = await startProxy(acme, () => target);
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(proxy.address() as AddressInfo).port}/`);
    const received = async () => (await page.locator('#log').textContent())!.split('\n').filter(Boolean);
    const slots = first.model<EventStreamSlot>(EventStreamSlot.name);
    await waitFor(async () => (await slots.countDocuments({ companyId: acme.companyId })) === 1, { message: "the page's stream open" });

    const before = await publishEvents(first, acme.companyId, 3, { label: 'before' });
    await waitFor(async () => (await received()).length === before.length, { message: 'the first events in the page' });

    // The first process shuts down: its streams end cleanly, and the proxy now reaches the second one. The events
    // logged before the browser reconnects (about 3 s later) come only if it resumes after the last one it had.
    target = deployment.bases[1];
    await first.app.get(EventStreams).beforeApplicationShutdown();
    const during = await publishEvents(second, acme.companyId, 3, { label: 'while-reconnecting' });
    await waitFor(async () => (await received()).length === before.length + during.length, { timeoutMs: 15_000, message: 'the page to catch up' });
    const after = await publishEvents(second, acme.companyId, 2, { label: 'after' });
    await waitFor(async () => (await received()).length === before.length + during.length + after.length, { message: 'the live events' });

    expect(await received()).toEqual([...before, ...during, ...after].map((event) => event.id));
  }, 60_000);
});
