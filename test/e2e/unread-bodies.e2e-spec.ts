import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Contact } from '../../src/contacts/contact.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { listen } from '../support/sse-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const UNSUPPORTED = 'urn:parley:problem:unsupported-media-type';
const READS_JSON = 'this route reads application/json or application/x-www-form-urlencoded';

/** Issue 41, finding 5: a body the server does not read is never a success (415, nothing changed). */
describe('bodies in a type the route does not read', () => {
  let t: TestApp;
  let base: string;
  let acme: TestCompany;
  let key: string;
  let contactId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    base = await listen(t.app);
    acme = await registerCompany(t.http, 'Acme');
    key = await createApiKey(t.http, acme, ['messages:write']);
    contactId = (await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Grace Hopper' }).expect(201)).body.id;
  });
  afterAll(() => t.close());

  /** A raw request: `type` undefined sends the body with no Content-Type at all (fetch adds none to bytes). */
  const raw = (method: string, path: string, body: string, headers: Record<string, string>, type?: string) =>
    fetch(base + path, {
      method,
      headers: { ...headers, ...(type === undefined ? {} : { 'content-type': type }) },
      body: new TextEncoder().encode(body),
    });
  // Without their pending events, which the relay moves to the log whenever it runs.
  const contacts = () => t.model<Contact>(Contact.name).find({ companyId: acme.companyId }, { pendingEvents: 0 }).sort({ _id: 1 }).lean();

  it.each([
    ['text/plain', 'text/plain;charset=UTF-8', 'Content-Type text/plain'],
    ['no content type', undefined, 'no Content-Type'],
    ['application/xml', 'application/xml', 'Content-Type application/xml'],
    ['multipart/form-data on a route that reads no files', 'multipart/form-data; boundary=x', 'Content-Type multipart/form-data'],
  ])('PATCH and POST with %s: 415 problem details naming the accepted types, nothing changed', async (_case, type, given) => {
    const before = await contacts();
    const body = JSON.stringify({ name: 'Changed', email: 'changed@example.com' });
    for (const [method, path] of [
      ['PATCH', `/v1/contacts/${contactId}`],
      ['POST', '/v1/contacts'],
    ] as const) {
      const response = await raw(method, path, body, acme.auth, type);
      expect(response.status).toBe(415);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({
        type: UNSUPPORTED,
        status: 415,
        statusCode: 415,
        message: `The request body has ${given}; ${READS_JSON}`,
        accepted: ['application/json', 'application/x-www-form-urlencoded'],
      });
    }
    expect(await contacts()).toEqual(before);
  });

  it('answers in the envelope on Interface B, storing no message', async () => {
    const body = JSON.stringify({ from: { phone: '+14155550123' }, text: 'Hello' });
    for (const type of ['text/plain', undefined]) {
      const response = await raw('POST', '/api/external/messages', body, { 'x-api-key': key }, type);
      expect(response.status).toBe(415);
      expect(await response.json()).toEqual({
        success: false,
        error: `The request body has ${type ? `Content-Type ${type}` : 'no Content-Type'}; ${READS_JSON}`,
      });
    }
    expect(await t.model<Message>(Message.name).countDocuments({ companyId: acme.companyId })).toBe(0);
  });

  it('names multipart/form-data on a route that reads files', async () => {
    const response = await raw('POST', '/api/external/media', 'bytes', { 'x-api-key': key }, 'text/plain');
    expect(response.status).toBe(415);
    expect(await response.json()).toEqual({
      success: false,
      error: 'The request body has Content-Type text/plain; this route reads multipart/form-data',
    });
  });

  it('still takes JSON, forms, and requests without a body', async () => {
    const json = await raw('PATCH', `/v1/contacts/${contactId}`, JSON.stringify({ name: 'Grace B. Hopper' }), acme.auth, 'application/json');
    expect(json.status).toBe(200);
    const form = await raw('PATCH', `/v1/contacts/${contactId}`, 'name=Grace+Hopper', acme.auth, 'application/x-www-form-urlencoded');
    expect(form.status).toBe(200);
    expect((await t.model<Contact>(Contact.name).findOne({ _id: contactId, companyId: acme.companyId }).lean())?.name).toBe('Grace Hopper');
    const empty = await fetch(`${base}/v1/contacts/${contactId}`, { method: 'DELETE', headers: acme.auth });
    expect(empty.status).toBe(200);
  });
});
