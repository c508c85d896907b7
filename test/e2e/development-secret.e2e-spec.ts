import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppConfig } from '../../src/config/app-config.js';
import { DEVELOPMENT_SECRET_FILE } from '../../src/config/development-secret.js';
import { signWebhook } from '../../src/webhooks/delivery/webhook-signature.js';
import { Webhook } from '../../src/webhooks/webhook.schema.js';
import { createApiKey, registerCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** Issue 41, finding 8: the quick start (no JWT_SECRET, data kept on disk) survives a restart. */
describe('the development secret, without JWT_SECRET', () => {
  let dir: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-secret-'));
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = (dataDir: string) => createTestApp({ env: { JWT_SECRET: '', EMBEDDED_DATA_DIR: dataDir } });

  it('is made once, kept in the data directory readable only by its owner, and a restart still delivers signed webhooks', async () => {
    let first: TestApp | undefined = await start(dir);
    const file = join(dir, DEVELOPMENT_SECRET_FILE);
    expect(first.app.get(AppConfig)).toMatchObject({ jwtSecretGenerated: true, jwtSecretFile: file });
    const kept = readFileSync(file, 'utf8').trim();
    expect(kept).toBe(first.app.get(AppConfig).jwtSecret);
    expect(kept.length).toBeGreaterThanOrEqual(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const acme = await registerCompany(first.http, 'Acme');
    const key = await createApiKey(first.http, acme, ['messages:write']);
    const created = await first.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: receiver.url('/after-restart'), events: ['message.received'] })
      .expect(201);
    const secret = created.body.secret as string;
    await first.close();
    first = undefined;

    const second = await start(dir);
    try {
      expect(second.app.get(AppConfig).jwtSecret).toBe(kept);
      // The token of the first process still holds, and so does the sealed signing secret.
      await second.http.get('/v1/webhooks').set(acme.auth).expect(200);
      await second.http
        .post('/api/external/messages')
        .set('x-api-key', key)
        .send({ from: { phone: '+14155550199' }, text: 'After the restart' })
        .expect(201);
      const [delivery] = await receiver.received('/after-restart', 1, 10_000);
      const id = delivery!.headers['webhook-id'] as string;
      const timestamp = Number(delivery!.headers['webhook-timestamp']);
      expect(delivery!.headers['webhook-signature']).toBe(signWebhook(secret, id, timestamp, delivery!.body));
      expect(JSON.parse(delivery!.body)).toMatchObject({ type: 'message.received', data: { message: { text: 'After the restart' } } });
      const stored = await second.model<Webhook>(Webhook.name).findOne({ companyId: acme.companyId }).lean();
      expect(stored).toMatchObject({ isActive: true, disabledReason: null });
    } finally {
      await second.close();
    }
    expect(readFileSync(file, 'utf8').trim()).toBe(kept);
  });

  it('in memory, stays a random secret of each process, kept in no file', async () => {
    const memory = await start('memory');
    try {
      const config = memory.app.get(AppConfig);
      expect(config.jwtSecretGenerated).toBe(true);
      expect(config.jwtSecretFile).toBeUndefined();
    } finally {
      await memory.close();
    }
    const other = await start('memory');
    try {
      expect(other.app.get(AppConfig).jwtSecret).not.toBe(readFileSync(join(dir, DEVELOPMENT_SECRET_FILE), 'utf8').trim());
    } finally {
      await other.close();
    }
  });
});
