import { expect } from '@jest/globals';
import { Types } from 'mongoose';
import type { Response } from 'supertest';
import { IdempotencyRecord } from '../../src/common/idempotency/idempotency-record.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { registerCompany, type TestCompany } from './factories.js';
import type { TestApp } from './test-app.js';

let sequence = 0;

/** An Idempotency-Key no other test uses. */
export function uniqueKey(): string {
  sequence += 1;
  return `key-${sequence}-${Date.now()}`;
}

/** An inbound message from a contact no other test uses, which opens a conversation of its own. */
export function newContactMessage(text: string): { from: { phone: string }; text: string } {
  sequence += 1;
  return { from: { phone: `+1415666${String(sequence).padStart(4, '0')}` }, text };
}

/** The same answer, bytes included, plus the replay header the first one did not have. */
export function expectReplayOf(replayed: Response, first: Response): void {
  expect(replayed.status).toBe(first.status);
  expect(replayed.headers['content-type']).toBe(first.headers['content-type']);
  expect(replayed.text).toBe(first.text);
  expect(replayed.headers['idempotent-replayed']).toBe('true');
  expect(first.headers['idempotent-replayed']).toBeUndefined();
}

export const idempotencyRecords = (t: TestApp) =>
  t.model<IdempotencyRecord & { companyId: Types.ObjectId }>(IdempotencyRecord.name);

/** A registered company with an API key (`messages:write`), and the requests the idempotency suites send as it. */
export class IdempotencyClient {
  private constructor(
    private readonly t: TestApp,
    readonly company: TestCompany,
    readonly apiKey: string,
    private readonly apiKeyId: string,
  ) {}

  static async register(t: TestApp, name: string): Promise<IdempotencyClient> {
    const company = await registerCompany(t.http, name);
    const created = await t.http.post('/v1/api-keys').set(company.auth).send({ name: 'connector', scopes: ['messages:write'] }).expect(201);
    return new IdempotencyClient(t, company, created.body.key, created.body.id);
  }

  /** `key` as it is kept when the company's admin (Interface A) or its API key (Interface B) sends it. */
  keptKey(key: string, as: 'agent' | 'api-key'): string {
    return as === 'agent' ? `agent:${this.company.agentId} ${key}` : `api-key:${this.apiKeyId} ${key}`;
  }

  /** The filter of the record of `key`, sent by either principal of the client. */
  recordFilter(key: string) {
    return { companyId: this.company.companyId, key: { $in: [this.keptKey(key, 'agent'), this.keptKey(key, 'api-key')] } };
  }

  /** `POST /api/external/messages` (Interface B). */
  inbound(body: object, key?: string) {
    const request = this.t.http.post('/api/external/messages').set('x-api-key', this.apiKey);
    if (key !== undefined) request.set('Idempotency-Key', key);
    return request.send(body);
  }

  /** `POST /v1/conversations/:id/messages` (Interface A), as the company's admin. */
  reply(conversationId: string, body: object, key?: string) {
    const request = this.t.http.post(`/v1/conversations/${conversationId}/messages`).set(this.company.auth);
    if (key !== undefined) request.set('Idempotency-Key', key);
    return request.send(body);
  }

  /** A new contact's message, which opens a conversation: answers its id. */
  async openConversation(): Promise<string> {
    const response = await this.inbound(newContactMessage('hello')).expect(201);
    return response.body.data.conversation.id as string;
  }

  messagesIn(conversationId: string) {
    return this.t
      .model<Message>(Message.name)
      .find({ companyId: this.company.companyId, conversationId: new Types.ObjectId(conversationId) })
      .lean();
  }

  records() {
    return idempotencyRecords(this.t).find({ companyId: this.company.companyId }).lean();
  }

  /**
   * A `running` claim of `key` on `path` by another process (claim id `another-process`), its lease a minute long:
   * the API key's on Interface B, the admin's on Interface A.
   */
  async claimedElsewhere(key: string, path: string): Promise<void> {
    const now = Date.now();
    await idempotencyRecords(this.t).create({
      companyId: new Types.ObjectId(this.company.companyId),
      key: this.keptKey(key, path.startsWith('/api/external/') ? 'api-key' : 'agent'),
      route: `POST ${path}`,
      path,
      claimId: 'another-process',
      state: 'running',
      leaseExpiresAt: new Date(now + 60_000),
      expiresAt: new Date(now + 3_600_000),
    });
  }

  recordOf(key: string) {
    return idempotencyRecords(this.t).findOne(this.recordFilter(key)).lean();
  }
}
