import type { TestCompany } from './factories.js';
import type { TestApp } from './test-app.js';

/** Creates a channel record through the API (as the company's admin) and answers it. */
export async function createChannel(t: TestApp, company: TestCompany, body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  return (await t.http.post('/v1/channels').set(company.auth).send(body).expect(201)).body;
}

/**
 * Creates a template through the API and approves it as the connector does (a key with `templates:manage`);
 * answers the approved template.
 */
export async function approvedTemplate(
  t: TestApp,
  company: TestCompany,
  templatesKey: string,
  body: { channel: string; name: string; language?: string; category?: string; body: string },
): Promise<{ id: string; name: string; language: string; body: string }> {
  const created = await t.http
    .post('/v1/message-templates')
    .set(company.auth)
    .send({ language: 'en', category: 'utility', ...body })
    .expect(201);
  const approved = await t.http
    .patch(`/api/external/message-templates/${created.body.id}`)
    .set('x-api-key', templatesKey)
    .send({ status: 'approved' })
    .expect(200);
  return approved.body.data;
}
