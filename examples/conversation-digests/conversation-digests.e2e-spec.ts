import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EventConsumerLane } from '../../src/events/consumers/event-consumer-lane.schema.js';
import { settle } from '../../test/support/event-log.js';
import { registerCompany, uniqueEmail, type TestCompany } from '../../test/support/factories.js';
import { createTestApp, type TestApp } from '../../test/support/test-app.js';
import { ConversationDigest } from './conversation-digest.schema.js';
import { ConversationDigestsModule } from './conversation-digests.module.js';

/** The example extension, imported next to the app as a team would: its step type and its consumer, end to end. */
describe('examples/conversation-digests', () => {
  let t: TestApp;
  let acme: TestCompany;

  beforeAll(async () => {
    t = await createTestApp({ imports: [ConversationDigestsModule] });
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(() => t.close());

  async function conversation(): Promise<string> {
    const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Grace', email: uniqueEmail('grace') }).expect(201);
    return (await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id }).expect(201)).body.id;
  }

  const digests = () => t.model<ConversationDigest>(ConversationDigest.name).find({ companyId: acme.companyId }).lean();

  it('validates and runs the custom flow step, and the consumer writes one digest per closed conversation', async () => {
    const flow = await t.http
      .post('/v1/flows')
      .set(acme.auth)
      .send({ name: 'Wrap up', steps: [{ type: 'set_subject', subject: 'Refund request' }, { type: 'close', reason: 'Refunded' }] })
      .expect(201);
    const conversationId = await conversation();
    const run = await t.http.post(`/v1/flows/${flow.body.id}/execute`).set(acme.auth).send({ conversationId }).expect(200);
    expect(run.body.steps).toEqual([
      { type: 'set_subject', status: 'completed' },
      { type: 'close', status: 'completed' },
    ]);
    expect((await t.http.get(`/v1/conversations/${conversationId}`).set(acme.auth).expect(200)).body).toMatchObject({
      subject: 'Refund request',
      status: 'closed',
    });

    await settle(t);
    expect(await digests()).toEqual([
      expect.objectContaining({ conversationId, subject: 'Refund request', closeReason: 'Refunded', durationSeconds: expect.any(Number) }),
    ]);
  });

  it('refuses an invalid step of the custom type like any other, and documents the type in OpenAPI', async () => {
    const refused = await t.http.post('/v1/flows').set(acme.auth).send({ name: 'Bad', steps: [{ type: 'set_subject' }] }).expect(400);
    expect(refused.body.errors.map((error: { field: string }) => error.field)).toEqual(expect.arrayContaining(['steps.0.subject']));
    expect(refused.body.errors.every((error: { field: string }) => error.field === 'steps.0.subject')).toBe(true);
    const unknown = await t.http.post('/v1/flows').set(acme.auth).send({ name: 'Bad', steps: [{ type: 'set_mood' }] }).expect(400);
    expect(unknown.body.errors[0].message).toMatch(/expected one of .*set_subject/);

    const { body: document } = await t.http.get('/docs-json').expect(200);
    expect(document.components.schemas.SetSubjectStepDto.properties.subject).toMatchObject({ type: 'string', minLength: 1, maxLength: 500 });
    const steps = document.components.schemas.WriteFlowDto.properties.steps.items;
    expect(steps.discriminator.mapping.set_subject).toBe('#/components/schemas/SetSubjectStepDto');
  });

  it('writes each digest once, however often the consumer reads the event again', async () => {
    const before = await digests();
    // Rewind the consumer, as a crash between its effect and its new position would: it reads every event again.
    await t.model<EventConsumerLane>(EventConsumerLane.name).updateOne(
      { companyId: acme.companyId, _id: `example-conversation-digests:${acme.companyId}` },
      { $set: { position: 0, nextDueAt: new Date() }, $inc: { queueVersion: 1 } },
    );
    await settle(t);
    expect(await digests()).toEqual(before);
  });
});
