import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DemoSeedService, type DemoCredentials } from '../../src/seed/demo-seed.service.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Debian's chromium (`apt-get install chromium`, which .ci/run does); browser downloads are not possible here. */
const CHROMIUM = '/usr/bin/chromium';
const available = existsSync(CHROMIUM);
if (!available && process.env.CI !== 'true') {
  console.warn(`Swagger UI browser test skipped: ${CHROMIUM} is missing (apt-get install chromium); on CI it must run`);
}
const describeInBrowser = available || process.env.CI === 'true' ? describe : describe.skip;

describeInBrowser('Swagger UI in headless Chromium: "Try it out" with only Authorize filled', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let demo: DemoCredentials;

  beforeAll(async () => {
    t = await createTestApp({ env: { DEMO_SEED: 'true' } });
    demo = (await t.app.get(DemoSeedService).seed())!;
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/docs`);
    await page.locator('.swagger-ui .btn.authorize').first().click();
    const bearer = page.locator('.auth-container').filter({ has: page.locator('#auth-bearer-value') });
    await bearer.locator('#auth-bearer-value').fill(demo.accessToken);
    await bearer.locator('button.authorize').click();
    await page.locator('.modal-ux button.close-modal').click();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  /** Opens the operation, presses "Try it out" then "Execute", and answers the status and body shown. */
  async function tryItOut(operationId: string): Promise<{ status: number; body: { data: Record<string, unknown>[] } }> {
    // Tags are closed (docExpansion: none): open the operation's own tag first.
    const tag = operationId.startsWith('Conversations') ? 'Conversations' : 'Contacts';
    await page.locator(`#operations-tag-${tag}`).click();
    const operation = page.locator(`[id$="-${operationId}"]`);
    await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn').click();
    await operation.locator('.execute').click();
    const live = operation.locator('.live-responses-table .response');
    const status = Number(await live.locator('.response-col_status').first().innerText());
    const body = JSON.parse(await live.locator('.response-col_description pre').first().innerText());
    return { status, body };
  }

  it('GET /v1/conversations answers 200 with the demo conversations and their contacts', async () => {
    const { status, body } = await tryItOut('ConversationsController_list_v1');
    expect(status).toBe(200);
    expect(body.data.map((conversation) => (conversation.contact as { name: string }).name).sort()).toEqual([
      'Alan Turing',
      'Grace Hopper',
    ]);
  }, 30_000);

  it('GET /v1/contacts answers 200 with the demo contacts', async () => {
    const { status, body } = await tryItOut('ContactsController_list_v1');
    expect(status).toBe(200);
    expect(body.data.map((contact) => contact.name).sort()).toEqual(['Alan Turing', 'Grace Hopper']);
  }, 30_000);
});
