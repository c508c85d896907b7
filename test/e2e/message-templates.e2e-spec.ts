import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { MessageTemplate } from '../../src/message-templates/message-template.schema.js';
import { approvedTemplate, createChannel } from '../support/channels.js';
import { EventRecorder } from '../support/event-log.js';
import { addAgent, createApiKey, twoCompanies, uniqueEmail, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const BODY = 'Hi {{1}}, your order {{2}} has shipped.';

/** Message templates (contract section 17): created by supervisors, approved by the connector, sent by name. */
describe('message templates', () => {
  let t: TestApp;
  let recorder: EventRecorder;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  let supervisor: TestAgentLogin;
  let templatesKey: string;
  let globexTemplatesKey: string;
  let messagesKey: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    recorder = new EventRecorder(t);
    ({ acme, globex } = await twoCompanies(t.http));
    [agent, supervisor] = await Promise.all([addAgent(t, acme, 'agent'), addAgent(t, acme, 'supervisor')]);
    templatesKey = await createApiKey(t.http, acme, ['templates:manage']);
    globexTemplatesKey = await createApiKey(t.http, globex, ['templates:manage']);
    messagesKey = await createApiKey(t.http, acme, ['messages:write']);
    await createChannel(t, acme, { key: 'whatsapp', type: 'whatsapp', name: 'WhatsApp' });
    await createChannel(t, acme, { key: 'sms', type: 'sms', name: 'SMS' });
    await createChannel(t, globex, { key: 'whatsapp', type: 'whatsapp', name: 'Globex WhatsApp' });
    await createChannel(t, globex, { key: 'globex-only', type: 'sms', name: 'Globex SMS' });
  });
  beforeEach(() => recorder.clear());
  afterAll(() => t.close());

  const create = (caller: { auth: { Authorization: string } }, body: Record<string, unknown>) => t.http.post('/v1/message-templates').set(caller.auth).send(body);
  const report = (key: string, id: string, body: Record<string, unknown>) => t.http.patch(`/api/external/message-templates/${id}`).set('x-api-key', key).send(body);
  const stored = (company: TestCompany) => t.model<MessageTemplate>(MessageTemplate.name).find({ companyId: company.companyId }).lean();

  describe('/v1/message-templates', () => {
    it('creates a pending template (supervisor), counting its placeholders, and emits template.status_changed from null', async () => {
      const response = await create(supervisor, { channel: 'WhatsApp', name: 'order_shipped', language: 'en-us', category: 'utility', body: BODY }).expect(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        channel: 'whatsapp',
        name: 'order_shipped',
        language: 'en-US',
        category: 'utility',
        body: BODY,
        placeholderCount: 2,
        status: 'pending',
        rejectionReason: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const events = await recorder.events();
      expect(events.map((event) => [event.type, event.data])).toEqual([['template.status_changed', { template: response.body, previousStatus: null }]]);
    });

    it.each([
      ['a gap in the placeholders', { body: 'Hi {{1}}, order {{3}}' }, 'body', 'body placeholders must be numbered from {{1}} without gaps: {{2}} is missing (the highest is {{3}})'],
      ['placeholders not from 1', { body: 'Order {{2}}' }, 'body', 'body placeholders must be numbered from {{1}} without gaps: {{1}} is missing (the highest is {{2}})'],
      ['a named placeholder', { body: 'Hi {{name}}' }, 'body', 'body placeholders are {{1}}, {{2}}, … numbered from 1: {{name}} is not one'],
      ['an empty body', { body: '' }, 'body', undefined],
      ['a body of 1025 characters', { body: 'x'.repeat(1025) }, 'body', undefined],
      ['an upper-case name', { name: 'Order_Shipped' }, 'name', 'name may contain only lower-case letters, digits and "_", 1 to 512 of them'],
      ['a name with a dash', { name: 'order-shipped' }, 'name', undefined],
      ['a malformed language', { language: 'english!' }, 'language', undefined],
      ['an unknown category', { category: 'promotional' }, 'category', undefined],
      ['a malformed channel', { channel: 'what sapp' }, 'channel', undefined],
      ['a channel without a record', { channel: 'telegram' }, 'channel', 'channel must be the key of one of your channels; there is none with key telegram (POST /v1/channels)'],
      ["another company's channel", { channel: 'globex-only' }, 'channel', undefined],
    ])('answers 400 naming the field for %s, and stores nothing', async (_case, change, field, message) => {
      const before = (await stored(acme)).length;
      const response = await create(acme, { channel: 'whatsapp', name: 'refused', language: 'en', category: 'marketing', body: 'Hello', ...change }).expect(400);
      expect(response.body.errors).toEqual(expect.arrayContaining([message ? { field, message } : expect.objectContaining({ field })]));
      expect(await stored(acme)).toHaveLength(before);
    });

    it('answers 409 for a name taken on the channel in the language; another language, channel or company is fine', async () => {
      const body = { channel: 'whatsapp', name: 'welcome', language: 'en', category: 'marketing', body: 'Welcome!' };
      await create(acme, body).expect(201);
      const taken = await create(acme, { ...body, language: 'EN' }).expect(409);
      expect(taken.body.detail).toBe('A template named welcome in en already exists on channel whatsapp');
      await create(acme, { ...body, language: 'pt-BR' }).expect(201);
      await create(acme, { ...body, channel: 'sms' }).expect(201);
      await create(globex, body).expect(201);
      expect((await stored(acme)).filter((template) => template.name === 'welcome')).toHaveLength(3);
    });

    it('lets any agent list and read, and only supervisors and admins create and delete', async () => {
      const { body: created } = await create(acme, { channel: 'sms', name: 'roles', language: 'en', category: 'utility', body: 'x' }).expect(201);
      await t.http.get('/v1/message-templates').set(agent.auth).expect(200);
      await t.http.get(`/v1/message-templates/${created.id}`).set(agent.auth).expect(200);
      await create(agent, { channel: 'sms', name: 'by_agent', language: 'en', category: 'utility', body: 'x' }).expect(403);
      await t.http.delete(`/v1/message-templates/${created.id}`).set(agent.auth).expect(403);
      expect(await t.http.delete(`/v1/message-templates/${created.id}`).set(supervisor.auth).expect(200)).toMatchObject({ body: { id: created.id, deleted: true } });
      await t.http.get(`/v1/message-templates/${created.id}`).set(acme.auth).expect(404);
      expect((await stored(acme)).find((template) => template.name === 'by_agent')).toBeUndefined();
    });

    it('lists newest first, by channel and by status, never another company’s', async () => {
      const { body: sms } = await create(acme, { channel: 'sms', name: 'listed', language: 'en', category: 'utility', body: 'x' }).expect(201);
      const list = async (query: string, company = acme) => (await t.http.get(`/v1/message-templates?limit=100${query}`).set(company.auth).expect(200)).body.data as { id: string; channel: string; status: string }[];
      const all = await list('');
      expect(all.map((template) => template.id)).toEqual([...all.map((template) => template.id)].sort().reverse());
      const upper = await list('&channel=SMS');
      expect(upper.every((template) => template.channel === 'sms')).toBe(true);
      expect(upper.map((template) => template.id)).toContain(sms.id);
      expect((await list('&channel=sms')).map((template) => template.id)).toContain(sms.id);
      expect((await list('&status=approved&channel=sms')).map((template) => template.id)).not.toContain(sms.id);
      expect((await list('&status=pending')).map((template) => template.id)).toContain(sms.id);
      expect((await list('', globex)).map((template) => template.id)).not.toContain(sms.id);
      await t.http.get(`/v1/message-templates/${sms.id}`).set(globex.auth).expect(404);
      await t.http.delete(`/v1/message-templates/${sms.id}`).set(globex.auth).expect(404);
      await t.http.get('/v1/message-templates?status=paused').set(acme.auth).expect(400);
    });
  });

  describe('the connector: /api/external/message-templates (scope templates:manage)', () => {
    it('lists the pending templates in the envelope, with nextCursor', async () => {
      const { body: pending } = await create(acme, { channel: 'whatsapp', name: 'to_review', language: 'en', category: 'utility', body: 'x' }).expect(201);
      const page = await t.http.get('/api/external/message-templates?status=pending&limit=1').set('x-api-key', templatesKey).expect(200);
      expect(page.body).toEqual({ success: true, data: [pending], nextCursor: expect.any(String) });
      const one = await t.http.get(`/api/external/message-templates/${pending.id}`).set('x-api-key', templatesKey).expect(200);
      expect(one.body).toEqual({ success: true, data: pending });
      const globexList = await t.http.get('/api/external/message-templates?limit=100').set('x-api-key', globexTemplatesKey).expect(200);
      expect(globexList.body.data.map((template: { id: string }) => template.id)).not.toContain(pending.id);
    });

    it('approves and rejects, each change with template.status_changed; the same status again changes nothing', async () => {
      const { body: created } = await create(acme, { channel: 'whatsapp', name: 'verdicts', language: 'en', category: 'marketing', body: 'x' }).expect(201);
      await recorder.clear();
      const rejected = await report(templatesKey, created.id, { status: 'rejected', rejectionReason: 'INVALID_FORMAT' }).expect(200);
      expect(rejected.body).toEqual({ success: true, data: { ...created, status: 'rejected', rejectionReason: 'INVALID_FORMAT', updatedAt: expect.any(String) } });
      const again = await report(templatesKey, created.id, { status: 'rejected', rejectionReason: 'something else' }).expect(200);
      expect(again.body.data).toEqual(rejected.body.data);
      const approved = await report(templatesKey, created.id, { status: 'approved' }).expect(200);
      expect(approved.body.data).toMatchObject({ status: 'approved', rejectionReason: null });
      const events = await recorder.events();
      expect(events.map((event) => [event.type, event.data])).toEqual([
        ['template.status_changed', { template: rejected.body.data, previousStatus: 'pending' }],
        ['template.status_changed', { template: approved.body.data, previousStatus: 'rejected' }],
      ]);
      const feed = await t.http.get('/v1/events?types=TEMPLATE_STATUS_CHANGED').set(acme.auth).expect(200);
      expect(feed.body.data.map((event: { id: string }) => event.id)).toEqual(expect.arrayContaining(events.map((event) => event.id)));
    });

    it('answers every failure in the envelope: 400, 401, 403 without the scope, 404 for another workspace', async () => {
      const { body: created } = await create(acme, { channel: 'whatsapp', name: 'failures', language: 'en', category: 'utility', body: 'x' }).expect(201);
      const bad = await report(templatesKey, created.id, { status: 'approved', rejectionReason: 'not with approved' }).expect(400);
      expect(bad.body).toEqual({ success: false, error: 'rejectionReason is allowed only with status rejected' });
      expect((await report(templatesKey, created.id, { status: 'paused' }).expect(400)).body.success).toBe(false);
      expect((await report(templatesKey, created.id, { status: 'approved', extra: 1 }).expect(400)).body.success).toBe(false);
      const unauthenticated = await t.http.patch(`/api/external/message-templates/${created.id}`).send({ status: 'approved' }).expect(401);
      expect(unauthenticated.body.success).toBe(false);
      const forbidden = await report(messagesKey, created.id, { status: 'approved' }).expect(403);
      expect(forbidden.body).toEqual({ success: false, error: 'The API key lacks the scope templates:manage' });
      await t.http.get('/api/external/message-templates').set('x-api-key', messagesKey).expect(403);
      const foreign = await report(globexTemplatesKey, created.id, { status: 'approved' }).expect(404);
      expect(foreign.body).toEqual({ success: false, error: `Message template ${created.id} not found` });
      await report(templatesKey, 'not-an-id', { status: 'approved' }).expect(404);
      expect((await t.http.get(`/v1/message-templates/${created.id}`).set(acme.auth).expect(200)).body.status).toBe('pending');
    });
  });

  describe('a key limited to channels (templates:manage)', () => {
    it("lists only its channels' templates and reads or reports on no other channel's (403, unchanged)", async () => {
      const key = await createApiKey(t.http, acme, ['templates:manage'], ['whatsapp']);
      const { body: sms } = await create(acme, { channel: 'sms', name: 'scoped_sms', language: 'en', category: 'utility', body: 'x' }).expect(201);
      const { body: whatsapp } = await create(acme, { channel: 'whatsapp', name: 'scoped_wa', language: 'en', category: 'utility', body: 'x' }).expect(201);
      const external = (path: string) => t.http.get(`/api/external/message-templates${path}`).set('x-api-key', key);

      const listed = await external('?limit=100').expect(200);
      expect(listed.body.data.length).toBeGreaterThan(0);
      expect(listed.body.data.every((template: { channel: string }) => template.channel === 'whatsapp')).toBe(true);
      expect(listed.body.data.map((template: { id: string }) => template.id)).toContain(whatsapp.id);
      const pending = await external('?status=pending&limit=100').expect(200);
      expect(pending.body.data.map((template: { id: string }) => template.id)).not.toContain(sms.id);
      const otherChannel = await external('?channel=SMS').expect(403);
      expect(otherChannel.body).toEqual({ success: false, error: 'This API key is limited to the channels whatsapp; the channel asked for is on sms' });

      const before = await stored(acme);
      await recorder.clear();
      const read = await external(`/${sms.id}`).expect(403);
      expect(read.body).toEqual({ success: false, error: `This API key is limited to the channels whatsapp; template ${sms.id} is on sms` });
      const approve = await report(key, sms.id, { status: 'approved' }).expect(403);
      expect(approve.body).toEqual(read.body);
      expect(await stored(acme)).toEqual(before);
      expect(await recorder.events()).toEqual([]);

      expect((await report(key, whatsapp.id, { status: 'approved' }).expect(200)).body.data.status).toBe('approved');
    });
  });

  describe('sending by name: POST /v1/conversations/:id/messages { template }', () => {
    let conversationId: string;

    beforeAll(async () => {
      await approvedTemplate(t, acme, templatesKey, { channel: 'whatsapp', name: 'shipped', language: 'en-US', body: BODY });
      await approvedTemplate(t, acme, templatesKey, { channel: 'sms', name: 'sms_only', body: 'Hello' });
      const inbound = await t.http
        .post('/api/external/messages')
        .set('x-api-key', messagesKey)
        .send({ from: { email: uniqueEmail('customer') }, text: 'Where is my order?', channel: 'whatsapp' })
        .expect(201);
      conversationId = inbound.body.data.conversation.id;
    });

    const send = (body: Record<string, unknown>, company = acme) => t.http.post(`/v1/conversations/${conversationId}/messages`).set(company.auth).send(body);

    it('sends a template message with its rendered text; message.sent carries the template for the connector', async () => {
      const response = await send({ template: { name: 'shipped', language: 'en-us', variables: ['Grace', '1042'] } }).expect(201);
      expect(response.body).toMatchObject({
        direction: 'outbound',
        type: 'template',
        text: 'Hi Grace, your order 1042 has shipped.',
        template: { id: expect.stringMatching(/^[0-9a-f]{24}$/), name: 'shipped', language: 'en-US', variables: ['Grace', '1042'] },
        senderType: 'agent',
        delivery: { status: 'pending' },
      });
      const [sent] = (await recorder.events()).filter((event) => event.type === 'message.sent');
      expect(sent.data.message).toEqual(response.body);
      const listed = (await t.http.get(`/v1/conversations/${conversationId}/messages`).set(acme.auth).expect(200)).body.data;
      expect(listed.at(-1)).toEqual(response.body);
    });

    it.each([
      ['an unknown template', { template: { name: 'nope', language: 'en-US', variables: [] } }, 'template.name', 'template nope in en-US on channel whatsapp does not exist'],
      ['another language', { template: { name: 'shipped', language: 'pt-BR', variables: ['a', 'b'] } }, 'template.name', 'template shipped in pt-BR on channel whatsapp does not exist'],
      ["another channel's template", { template: { name: 'sms_only', language: 'en' } }, 'template.name', 'template sms_only in en on channel whatsapp does not exist'],
      ['too few variables', { template: { name: 'shipped', language: 'en-US', variables: ['Grace'] } }, 'template.variables', 'template shipped takes 2 variables ({{1}}..{{2}}); 1 given'],
      ['no variables', { template: { name: 'shipped', language: 'en-US' } }, 'template.variables', 'template shipped takes 2 variables ({{1}}..{{2}}); 0 given'],
      ['an empty variable', { template: { name: 'shipped', language: 'en-US', variables: ['', 'x'] } }, 'template.variables', undefined],
      ['a malformed name', { template: { name: 'Shipped!', language: 'en-US', variables: [] } }, 'template.name', undefined],
      ['both text and template', { text: 'hi', template: { name: 'shipped', language: 'en-US', variables: ['a', 'b'] } }, 'text', 'exactly one of text, cannedResponseId, template is required, not text and template together'],
      ['neither text nor template', {}, 'template', 'exactly one of text, cannedResponseId, template is required'],
      ['a null text', { text: null }, 'text', undefined],
    ])('answers 400 naming the field for %s, and sends nothing', async (_case, body, field, message) => {
      await recorder.clear();
      const response = await send(body).expect(400);
      expect(response.body.errors).toEqual(expect.arrayContaining([message ? { field, message } : expect.objectContaining({ field })]));
      expect(await recorder.events()).toEqual([]);
    });

    it('refuses a pending or rejected template (400), and a deleted one', async () => {
      const { body: pending } = await create(acme, { channel: 'whatsapp', name: 'not_yet', language: 'en', category: 'utility', body: 'x' }).expect(201);
      const refused = await send({ template: { name: 'not_yet', language: 'en' } }).expect(400);
      expect(refused.body.errors).toEqual([{ field: 'template.name', message: 'template not_yet in en on channel whatsapp is pending: only approved templates can be sent' }]);
      await report(templatesKey, pending.id, { status: 'rejected' }).expect(200);
      expect((await send({ template: { name: 'not_yet', language: 'en' } }).expect(400)).body.errors[0].message).toMatch(/is rejected/);
      await report(templatesKey, pending.id, { status: 'approved' }).expect(200);
      await send({ template: { name: 'not_yet', language: 'en' } }).expect(201);
      await t.http.delete(`/v1/message-templates/${pending.id}`).set(acme.auth).expect(200);
      await send({ template: { name: 'not_yet', language: 'en' } }).expect(400);
    });

    it("answers 404 for another company's conversation, whose templates it cannot use either", async () => {
      await send({ template: { name: 'shipped', language: 'en-US', variables: ['a', 'b'] } }, globex).expect(404);
    });
  });
});
