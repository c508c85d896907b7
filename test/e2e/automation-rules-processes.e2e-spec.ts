import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AutomationRun } from '../../src/automation-rules/automation-run.schema.js';
import { AutomationRulesConsumer } from '../../src/automation-rules/automation-rules.consumer.js';
import { toDomainEvent } from '../../src/events/event-log.repository.js';
import { LoggedEvent } from '../../src/events/event-log.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { settle } from '../support/event-log.js';
import { createApiKey, registerCompany, uniqueEmail, type TestCompany } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';

describe('automation rules on two API processes', () => {
  let deployment: Deployment;
  let one: TestApp;
  let two: TestApp;
  let company: TestCompany;
  let key: string;

  beforeAll(async () => {
    deployment = await startDeployment('rulesprocesses', { THROTTLE_LIMIT: '100000' });
    [one, two] = deployment.apps;
    company = await registerCompany(one.http, 'Rules twice');
    key = await createApiKey(one.http, company, ['messages:write']);
  });
  afterAll(() => deployment.stop());

  const runs = () => one.model<AutomationRun>(AutomationRun.name).countDocuments({ companyId: company.companyId });
  const botMessages = () => one.model<Message>(Message.name).countDocuments({ companyId: company.companyId, senderType: 'bot' });

  it('runs a rule once per event, whichever process handles it, even both at once', async () => {
    await one.http
      .post('/v1/automation-rules')
      .set(company.auth)
      .send({
        name: 'Greet',
        trigger: { event: 'message.received' },
        actions: [
          { type: 'add_tags', tags: ['greeted'] },
          { type: 'send_message', text: 'Hello!' },
        ],
      })
      .expect(201);
    for (let i = 0; i < 6; i++) {
      const http = i % 2 ? two.http : one.http;
      await http
        .post('/api/external/messages')
        .set('x-api-key', key)
        .send({ from: { email: uniqueEmail('customer') }, text: `Hi ${i}` })
        .expect(201);
    }
    await settle(one, two);
    expect(await runs()).toBe(6);
    expect(await botMessages()).toBe(6);

    // Both processes handle the same event at the same moment (a lease lost mid-batch): one run, one message.
    const received = await one
      .model<LoggedEvent>(LoggedEvent.name)
      .findOne({ companyId: company.companyId, type: 'message.received' })
      .lean<LoggedEvent>();
    const event = toDomainEvent(received!, company.companyId);
    await Promise.all([one, two].map((app) => app.app.get(AutomationRulesConsumer).handle(company.companyId, [event])));
    await settle(one, two);
    expect(await runs()).toBe(6);
    expect(await botMessages()).toBe(6);
    const applied = await one.model<LoggedEvent>(LoggedEvent.name).countDocuments({ companyId: company.companyId, type: 'automation.applied' });
    expect(applied).toBe(6);
  }, 90_000);
});
