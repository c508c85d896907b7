import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Contact } from '../../src/contacts/contact.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { FlowExecution } from '../../src/flows/flow-execution.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { externalIdFilter } from '../../src/messages/messages.repository.js';
import { asSnapshot } from '../support/conversations.js';
import { EventRecorder } from '../support/event-log.js';
import { createApiKey, twoCompanies, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const PATH = '/api/external/messages';

interface PlanStage {
  stage: string;
  indexName?: string;
  inputStage?: PlanStage;
}

/** A connector's retries: the channel's own message id (`externalId`) makes a repeat the same message. */
describe('POST /api/external/messages with externalId', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let acmeKey: string;
  let globexKey: string;
  let recorder: EventRecorder;
  let sequence = 0;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    acmeKey = await createApiKey(t.http, acme, ['messages:write']);
    globexKey = await createApiKey(t.http, globex, ['messages:write']);
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await recorder.clear();
  });
  afterAll(() => t.close());

  /** A phone and a channel message id no other test uses. */
  function fresh(): { phone: string; externalId: string } {
    sequence += 1;
    return { phone: `+1415556${String(sequence).padStart(4, '0')}`, externalId: `wamid.HBgL${sequence}-${Date.now()}` };
  }

  const receive = (body: object, key = acmeKey) => t.http.post(PATH).set('x-api-key', key).send(body);
  const stored = (company: TestCompany, externalId: string) =>
    t.model<Message>(Message.name).find({ companyId: company.companyId, externalId }).lean();
  const conversationCount = (company: TestCompany) => t.model<Conversation>(Conversation.name).countDocuments({ companyId: company.companyId });
  const storedConversation = (company: TestCompany, id: string) =>
    t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean();

  it('finds a repeat through the unique partial index, as MongoDB plans the lookup (one key, one document examined)', async () => {
    const { phone, externalId } = fresh();
    await receive({ from: { phone }, text: 'Indexed?', channel: 'whatsapp', externalId }).expect(201);
    const explained = await t
      .model<Message>(Message.name)
      .find({ companyId: acme.companyId, ...externalIdFilter('whatsapp', externalId) })
      .explain('executionStats');
    const plan = explained as unknown as { queryPlanner: { winningPlan: PlanStage }; executionStats: Record<string, number> };
    let stage: PlanStage | undefined = plan.queryPlanner.winningPlan;
    while (stage && stage.stage !== 'IXSCAN') stage = stage.inputStage;
    expect(stage?.indexName).toBe('one_inbound_message_per_channel_external_id');
    expect(plan.executionStats).toMatchObject({ nReturned: 1, totalKeysExamined: 1, totalDocsExamined: 1 });
  });

  it('stores the first (201, duplicate false) and answers a repeat with it (200, duplicate true), storing and emitting nothing', async () => {
    const { phone, externalId } = fresh();
    const first = await receive({ from: { phone }, text: 'Where is my order?', channel: 'WhatsApp', externalId }).expect(201);
    expect(first.body.data.duplicate).toBe(false);
    expect(first.body.data.message).toMatchObject({ direction: 'inbound', externalId, delivery: null, text: 'Where is my order?' });
    expect((await recorder.events()).map((event) => event.type)).toEqual(['contact.created', 'conversation.created', 'message.received']);
    expect((await recorder.events())[2].data).toEqual({ message: first.body.data.message, conversation: first.body.data.conversation });
    await recorder.clear();
    const conversation = await storedConversation(acme, first.body.data.conversation.id);

    const repeat = await receive({ from: { phone }, text: 'Where is my order?', channel: 'whatsapp', externalId }).expect(200);
    expect(repeat.body).toEqual({ success: true, data: { ...first.body.data, duplicate: true } });
    expect(await stored(acme, externalId)).toHaveLength(1);
    expect(await recorder.events()).toEqual([]);
    // Not even the conversation was touched.
    expect(await storedConversation(acme, first.body.data.conversation.id)).toEqual(conversation);
  });

  it('is the stored message whatever the repeat says: another text or sender creates no contact', async () => {
    const { phone, externalId } = fresh();
    const first = await receive({ from: { phone }, text: 'original', externalId }).expect(201);
    const contacts = await t.model<Contact>(Contact.name).countDocuments({ companyId: acme.companyId });
    const repeat = await receive({ from: { email: 'someone-else@example.test' }, text: 'edited', externalId }).expect(200);
    expect(repeat.body.data).toEqual({ ...first.body.data, duplicate: true });
    expect(await t.model<Contact>(Contact.name).countDocuments({ companyId: acme.companyId })).toBe(contacts);
    expect(await recorder.events()).toEqual([
      expect.objectContaining({ type: 'contact.created' }),
      expect.objectContaining({ type: 'conversation.created' }),
      expect.objectContaining({ type: 'message.received' }),
    ]);
  });

  it('answers a repeat after the conversation closed with the stored message and the closed conversation, opening none', async () => {
    const { phone, externalId } = fresh();
    const first = await receive({ from: { phone }, text: 'hello', externalId }).expect(201);
    const closed = await t.http.post(`/v1/conversations/${first.body.data.conversation.id}/close`).set(acme.auth).send({}).expect(200);
    const conversations = await conversationCount(acme);
    await recorder.clear();

    const repeat = await receive({ from: { phone }, text: 'hello', externalId }).expect(200);
    expect(repeat.body.data).toEqual({ message: first.body.data.message, conversation: asSnapshot(closed.body), duplicate: true });
    expect(await conversationCount(acme)).toBe(conversations);
    expect(await recorder.events()).toEqual([]);
  });

  it('is unique per channel and per company: the same id on another channel or in another company is another message', async () => {
    const { phone, externalId } = fresh();
    const api = await receive({ from: { phone }, text: 'one', externalId }).expect(201);
    const sms = await receive({ from: { phone }, text: 'one', externalId, channel: 'sms' }).expect(201);
    const other = await receive({ from: { phone }, text: 'one', externalId }, globexKey).expect(201);
    expect(new Set([api.body.data.message.id, sms.body.data.message.id, other.body.data.message.id]).size).toBe(3);
    expect([api, sms, other].map((response) => response.body.data.duplicate)).toEqual([false, false, false]);
    expect((await stored(acme, externalId)).map((message) => message.channel).sort()).toEqual(['api', 'sms']);
    expect(await stored(globex, externalId)).toHaveLength(1);
    await receive({ from: { phone }, text: 'one', externalId, channel: 'SMS' }).expect(200);
    await receive({ from: { phone }, text: 'one', externalId }, globexKey).expect(200);
  });

  it('keeps the 200 of a repeat under its Idempotency-Key: replaying that key answers the same 200 duplicate', async () => {
    const { phone, externalId } = fresh();
    const body = { from: { phone }, text: 'with a key', externalId };
    const first = await receive(body).set('Idempotency-Key', `first-${externalId}`).expect(201);
    const repeat = await receive(body).set('Idempotency-Key', `second-${externalId}`).expect(200);
    const replayed = await receive(body).set('Idempotency-Key', `second-${externalId}`).expect(200);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(repeat.body);
    expect(repeat.body.data).toEqual({ ...first.body.data, duplicate: true });
    expect(await stored(acme, externalId)).toHaveLength(1);
  });

  it('stores messages without externalId every time, as before', async () => {
    const { phone } = fresh();
    const first = await receive({ from: { phone }, text: 'same' }).expect(201);
    const second = await receive({ from: { phone }, text: 'same' }).expect(201);
    expect(second.body.data.message.id).not.toBe(first.body.data.message.id);
    expect([first.body.data.message.externalId, second.body.data.message.externalId]).toEqual([null, null]);
  });

  it('stores one of 20 concurrent repeats (one 201, nineteen 200): one message, one conversation, one event of each, one flow run', async () => {
    const flow = await t.http
      .post('/v1/flows')
      .set(globex.auth)
      .send({ name: 'Greeter', trigger: { type: 'inbound_message' }, steps: [{ type: 'send_message', text: 'Hello!' }] })
      .expect(201);
    const { phone, externalId } = fresh();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => receive({ from: { phone }, text: 'at once', channel: 'whatsapp', externalId }, globexKey)),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([201, ...Array(19).fill(200)].sort());
    const created = responses.find((response) => response.status === 201)!;
    for (const response of responses) {
      expect(response.body.data.message).toEqual(created.body.data.message);
      expect(response.body.data.duplicate).toBe(response.status === 200);
    }
    expect(await stored(globex, externalId)).toHaveLength(1);
    const contact = await t.model<Contact>(Contact.name).find({ companyId: globex.companyId, phone }).lean();
    expect(contact).toHaveLength(1);
    expect(await t.model<Conversation>(Conversation.name).countDocuments({ companyId: globex.companyId, contactId: contact[0]._id })).toBe(1);

    const events = await recorder.settled();
    const ofThisMessage = events.filter((event) => event.type === 'message.received' && event.data.message.id === created.body.data.message.id);
    expect(ofThisMessage).toHaveLength(1);
    expect(events.filter((event) => event.type === 'conversation.created' && event.data.conversation.id === created.body.data.conversation.id)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'message.received')).toHaveLength(1);
    const runs = await t.model<FlowExecution>(FlowExecution.name).find({ companyId: globex.companyId, flowId: flow.body.id }).lean();
    expect(runs).toHaveLength(1);
    expect(events.filter((event) => event.type === 'message.sent')).toHaveLength(1);
  });

  it('shows externalId in the message list', async () => {
    const { phone, externalId } = fresh();
    const first = await receive({ from: { phone }, text: 'listed', externalId }).expect(201);
    const listed = await t.http.get(`/v1/conversations/${first.body.data.conversation.id}/messages`).set(acme.auth).expect(200);
    expect(listed.body.data).toEqual([first.body.data.message]);
  });

  it('refuses an externalId that is empty, over 255 characters or not a string, with 400 in the envelope, storing nothing', async () => {
    const { phone } = fresh();
    const cases: [unknown, string][] = [
      ['', 'externalId must not be empty'],
      ['x'.repeat(256), 'externalId must be shorter than or equal to 255 characters'],
      [42, 'externalId must be a string'],
      [{ $ne: null }, 'Field names starting with "$" are not allowed (found "$ne")'],
    ];
    for (const [externalId, error] of cases) {
      const response = await receive({ from: { phone }, text: 'x', externalId });
      expect({ externalId, status: response.status, body: response.body }).toEqual({ externalId, status: 400, body: { success: false, error } });
    }
    expect(await t.model<Contact>(Contact.name).countDocuments({ companyId: acme.companyId, phone })).toBe(0);
    await receive({ from: { phone }, text: 'x', externalId: 'x'.repeat(255) }).expect(201);
  });

  it('documents externalId, the 200 of a repeat and duplicate in the OpenAPI description', async () => {
    const { body: document } = await t.http.get('/docs-json').expect(200);
    const operation = document.paths[PATH].post;
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '201']));
    expect(document.components.schemas.InboundMessageDto.properties.externalId).toMatchObject({ type: 'string', minLength: 1, maxLength: 255 });
    expect(document.components.schemas.InboundMessageResultView.required).toEqual(expect.arrayContaining(['duplicate']));
    expect(document.components.schemas.MessageView.properties.externalId).toMatchObject({ type: 'string', nullable: true });
  });
});
