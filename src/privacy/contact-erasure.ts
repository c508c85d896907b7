import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { mongo, type Connection, type Types } from 'mongoose';
import { AnswerSeal } from '../common/idempotency/answer-seal.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { Clock } from '../lanes/clock.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import { MediaStorage } from '../media/media-storage.js';
import { scrubEventData } from './event-scrub.js';
import { ExportFiles } from './export-files.js';
import type { PrivacyRequest } from './privacy-request.schema.js';
import { PrivacyRequestView } from './privacy-request.view.js';
import { PrivacyRequestsRepository } from './privacy-requests.repository.js';

export const ERASE_TIMER = 'privacy-erase';
const BATCH = 500;
/** A firing stops after this long and sets its timer again: well within the timer's 30 s lease. */
const FIRING_BUDGET_MS = 10_000;

/** What an erasure works on: the contact, its conversations, and the words to look for in kept answers. */
interface Subject {
  companyId: Types.ObjectId;
  /** null: only some conversations' messages (retention), not a contact. */
  contactId: Types.ObjectId | null;
  conversationIds: Types.ObjectId[];
  request: Stored<PrivacyRequest> | null;
  /**
   * The sequence the events step has scrubbed up to in this run: its next batch reads the log from there on, not
   * again from the company's first event (a later run starts over; `erasedAt` skips what an earlier one did).
   */
  eventsAfter: number;
}

type Step = (subject: Subject, now: Date) => Promise<boolean>;

/** How long a timer waits for the request it was set for: it is set just before the request is stored. */
const STORE_GRACE_MS = 60_000;

/** A timer whose request is not stored: retried (with backoff) shortly after it was set, given up later. */
export function notStoredYet(timer: FiredTimer): void {
  if (timer.firedAt.getTime() < timer.dueAt.getTime() + STORE_GRACE_MS) throw new Error(`Privacy request ${timer.key} is not stored yet`);
}

/**
 * Carries out an erasure (contract section 23) on its durable timer, as idempotent steps: each works in batches
 * that mark what they did (`erasedAt`), and the request records the steps done, so a firing taken over after a
 * crash goes on where the last one stopped, and a long erasure is spread over firings that each stay within the
 * timer's lease. Kept answers are looked at first, while the contact's name, e-mail and phone are still there to
 * look for; the contact record is erased last but one; the last step marks the request completed with
 * `contact.erased` and `privacy_request.completed`, in one write.
 */
@Injectable()
export class ContactErasure implements OnModuleInit {
  private readonly logger = new Logger(ContactErasure.name);
  private readonly steps: ((subject: Subject & { contactId: Types.ObjectId }, now: Date) => Promise<boolean>)[] = [
    (subject) => this.keptAnswers(subject),
    (subject, now) => this.messages(subject, now),
    (subject) => this.conversations(subject),
    (subject, now) => this.events(subject, now),
    (subject, now) => this.deliveries(subject, now),
    (subject) => this.exports(subject),
    (subject, now) => this.mergeCopies(subject, now),
    (subject, now) => this.contact(subject, now),
  ];

  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly requests: PrivacyRequestsRepository,
    private readonly timers: DurableTimers,
    private readonly clock: Clock,
    private readonly media: MediaStorage,
    private readonly exportFiles: ExportFiles,
    private readonly seal: AnswerSeal,
  ) {}

  onModuleInit(): void {
    this.timers.register(ERASE_TIMER, (timer) => this.fire(timer));
  }

  /**
   * Retention (contract section 23): the messages of these conversations erased as an erasure erases them, with their
   * copies (previews, the event log, webhook deliveries); the conversations and their contact stay. False when the
   * budget ran out first: call again (every step goes on where it stopped).
   */
  async eraseMessagesOf(companyId: Types.ObjectId, conversationIds: Types.ObjectId[], budgetMs = FIRING_BUDGET_MS): Promise<boolean> {
    const started = Date.now();
    const subject: Subject = { companyId, contactId: null, conversationIds, request: null, eventsAfter: -1 };
    const steps: Step[] = [
      (s, now) => this.messages(s, now),
      (s) => this.conversations(s),
      (s, now) => this.events(s, now),
      (s, now) => this.deliveries(s, now),
    ];
    for (const step of steps) {
      while (!(await step(subject, this.clock.now()))) if (Date.now() - started > budgetMs) return false;
    }
    return true;
  }

  /** Runs the erasure of the timer's request as far as one firing's budget allows. */
  async fire(timer: FiredTimer): Promise<void> {
    const started = Date.now();
    let request = await this.requests.findById(timer.companyId, timer.key);
    if (!request) return notStoredYet(timer);
    if (request.type !== 'erase' || request.status === 'completed' || request.status === 'cancelled' || request.status === 'failed') return;
    if (request.status === 'pending') {
      if (await this.onHold(request)) return this.fail(request, 'legal_hold');
      request = await this.requests.transition(timer.companyId, { _id: request._id, status: 'pending' }, { $set: { status: 'running' } });
      if (!request) return;
    }
    const subject = {
      companyId: request.companyId,
      contactId: request.contactId,
      conversationIds: await this.conversationIdsOf(request.companyId, request.contactId),
      request,
      eventsAfter: -1,
    };
    for (let step = request.step; step < this.steps.length;) {
      if (Date.now() - started > FIRING_BUDGET_MS) {
        await this.timers.set(timer.companyId, ERASE_TIMER, timer.key, this.clock.now());
        return;
      }
      const done = await this.steps[step](subject, this.clock.now());
      if (!done) continue;
      step += 1;
      await this.requests.transition(timer.companyId, { _id: request._id, status: 'running' }, { $set: { step } });
    }
    await this.complete(request);
  }

  private async complete(request: Stored<PrivacyRequest>): Promise<void> {
    const completedAt = this.clock.now();
    const after = { ...request, status: 'completed' as const, completedAt, step: this.steps.length, updatedAt: completedAt };
    const requestId = request._id.toHexString();
    await this.requests.transition(
      request.companyId,
      { _id: request._id, status: 'running' },
      { $set: { status: 'completed', completedAt, step: this.steps.length } },
      [
        stageEvent('contact.erased', { contactId: request.contactId.toHexString(), requestId }, { id: `evt_erased_${requestId}` }),
        stageEvent('privacy_request.completed', { request: PrivacyRequestView.from(after) }, { id: `evt_privacy_${requestId}` }),
      ],
    );
    this.logger.log(`Contact ${request.contactId.toHexString()} of company ${request.companyId.toHexString()} erased (request ${requestId})`);
  }

  private async fail(request: Stored<PrivacyRequest>, reason: string): Promise<void> {
    const completedAt = this.clock.now();
    const after = { ...request, status: 'failed' as const, failureReason: reason, completedAt, updatedAt: completedAt };
    await this.requests.transition(
      request.companyId,
      { _id: request._id, status: request.status },
      { $set: { status: 'failed', failureReason: reason, completedAt } },
      [stageEvent('privacy_request.completed', { request: PrivacyRequestView.from(after) }, { id: `evt_privacy_${request._id.toHexString()}` })],
    );
  }

  private async onHold(request: Stored<PrivacyRequest>): Promise<boolean> {
    const contact = await this.collection('contacts').findOne(
      { _id: request.contactId, companyId: request.companyId },
      { projection: { legalHold: 1 } },
    );
    return contact?.legalHold === true;
  }

  private async conversationIdsOf(companyId: Types.ObjectId, contactId: Types.ObjectId): Promise<Types.ObjectId[]> {
    const rows = await this.collection('conversations')
      .find({ companyId, contactId }, { projection: { _id: 1 } })
      .toArray();
    return rows.map((row) => row._id as Types.ObjectId);
  }

  /** Removes the kept idempotent answers that show the contact (a replay then runs as a new request). */
  private async keptAnswers({ companyId, contactId, conversationIds }: Subject & { contactId: Types.ObjectId }): Promise<boolean> {
    const contact = await this.collection('contacts').findOne({ _id: contactId, companyId }, { projection: { name: 1, email: 1, phone: 1 } });
    const needles = [contactId.toHexString(), ...conversationIds.map((id) => id.toHexString()), contact?.name, contact?.email, contact?.phone].filter(
      (needle): needle is string => typeof needle === 'string' && needle.length > 0,
    );
    const keys = this.collection('idempotency_keys');
    for (let after: mongo.BSON.ObjectId | null = null; ;) {
      const filter: mongo.Filter<mongo.Document> = after ? { companyId, _id: { $gt: after } } : { companyId };
      const rows = await keys.find(filter, { projection: { key: 1, body: 1 }, sort: { _id: 1 }, limit: BATCH }).toArray();
      const holding = rows.filter((row) => {
        const body = row.body as mongo.Binary | Buffer | null | undefined;
        if (!body) return false;
        const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer);
        const opened = this.seal.open(bytes, `${companyId.toHexString()}\n${String(row.key)}`)?.toString('utf8');
        return opened !== undefined && needles.some((needle) => opened.includes(needle));
      });
      if (holding.length > 0) await keys.deleteMany({ companyId, _id: { $in: holding.map((row) => row._id) } });
      if (rows.length < BATCH) return true;
      after = rows[rows.length - 1]._id as mongo.BSON.ObjectId;
    }
  }

  /** Texts, captions, template variables and media (bytes included) of every message of its conversations, notes too. */
  private async messages({ companyId, conversationIds }: Subject, now: Date): Promise<boolean> {
    const messages = this.collection('messages');
    const batch = await messages
      .find(
        { companyId, conversationId: { $in: conversationIds }, erasedAt: { $exists: false } },
        { projection: { media: 1, template: 1 }, limit: BATCH },
      )
      .toArray();
    if (batch.length === 0) return true;
    for (const message of batch) {
      const mediaId = (message.media as { id?: Types.ObjectId } | null)?.id;
      // Before the message lets go of it: a crash in between deletes it again, which finds nothing.
      if (mediaId) await this.media.delete(companyId, mediaId);
    }
    const ids = batch.map((message) => message._id);
    await messages.updateMany({ companyId, _id: { $in: ids }, template: { $type: 'object' } }, { $set: { 'template.variables': [] } });
    await messages.updateMany(
      { companyId, _id: { $in: ids } },
      { $set: { text: null, caption: null, media: null, erasedAt: now }, $unset: { pendingEvents: 1 } },
    );
    return batch.length < BATCH;
  }

  /** Their copies of the contact and of its words; status, times, priority, assignment, SLA and rating stay. */
  private async conversations({ companyId, contactId, conversationIds }: Subject): Promise<boolean> {
    const conversations = this.collection('conversations');
    const scope = { companyId, _id: { $in: conversationIds } };
    if (contactId) await conversations.updateMany(scope, { $set: { contact: null, subject: null }, $unset: { pendingEvents: 1 } });
    await conversations.updateMany({ ...scope, lastMessage: { $type: 'object' } }, { $set: { 'lastMessage.preview': '' } });
    await conversations.updateMany({ ...scope, csat: { $type: 'object' } }, { $set: { 'csat.comment': null } });
    return true;
  }

  private eventsOf({ companyId, contactId, conversationIds }: Subject): mongo.Filter<mongo.Document> {
    const ids = conversationIds.map((id) => id.toHexString());
    return {
      companyId,
      $or: [
        { 'data.conversation.id': { $in: ids } },
        { 'data.message.conversationId': { $in: ids } },
        { 'data.execution.conversationId': { $in: ids } },
        ...(contactId ? [{ 'data.contact.id': contactId.toHexString() }] : []),
      ],
    };
  }

  /** The event log's copies: the events stay (sequence, type, ids), their data loses the contact's words. */
  private async events(subject: Subject, now: Date): Promise<boolean> {
    const events = this.collection('events');
    const batch = await events
      .find(
        { ...this.eventsOf(subject), sequence: { $gt: subject.eventsAfter }, erasedAt: { $exists: false } },
        { projection: { data: 1, sequence: 1 }, sort: { sequence: 1 }, limit: BATCH },
      )
      .toArray();
    if (batch.length === 0) return true;
    subject.eventsAfter = batch[batch.length - 1].sequence as number;
    await events.bulkWrite(
      batch.map((event) => ({
        updateOne: {
          filter: { _id: event._id, companyId: subject.companyId },
          update: { $set: { data: scrubEventData(event.data), erasedAt: now } },
        },
      })),
      { ordered: false },
    );
    return batch.length < BATCH;
  }

  /** Webhook delivery records of those events, pending and delivered: their payloads as the events now are. */
  private async deliveries(subject: Subject, now: Date): Promise<boolean> {
    const deliveries = this.collection('webhook_deliveries');
    for (let after = -1; ;) {
      const events = await this.collection('events')
        .find({ ...this.eventsOf(subject), sequence: { $gt: after } }, { projection: { _id: 1, sequence: 1 }, sort: { sequence: 1 }, limit: BATCH })
        .toArray();
      if (events.length === 0) return true;
      const rows = await deliveries
        .find(
          { companyId: subject.companyId, eventId: { $in: events.map((event) => event._id) }, erasedAt: { $exists: false } },
          { projection: { payload: 1 } },
        )
        .toArray();
      if (rows.length > 0) {
        await deliveries.bulkWrite(
          rows.map((row) => ({
            updateOne: {
              filter: { _id: row._id, companyId: subject.companyId },
              update: { $set: { payload: JSON.stringify(scrubEventData(JSON.parse(String(row.payload)))), erasedAt: now } },
            },
          })),
          { ordered: false },
        );
      }
      after = events[events.length - 1].sequence as number;
    }
  }

  /** Finished exports of the contact: the ZIP goes, the request stays (without a download). */
  private async exports({ companyId, contactId }: Subject & { contactId: Types.ObjectId }): Promise<boolean> {
    const built = await this.requests.find(companyId, { contactId, type: 'export', fileId: { $ne: null } }, { projection: { fileId: 1 } });
    for (const request of built) {
      await this.exportFiles.delete(companyId, request.fileId!);
      await this.requests.transition(companyId, { _id: request._id }, { $set: { fileId: null } });
    }
    return true;
  }

  /** The record stays as an id: a later message from the same phone or e-mail finds no contact and starts a new one. */
  private async contact({ companyId, contactId }: Subject & { contactId: Types.ObjectId }, now: Date): Promise<boolean> {
    await this.collection('contacts').updateOne(
      { _id: contactId, companyId, erasedAt: { $exists: false } },
      { $set: { tags: [], attributes: {}, erasedAt: now, updatedAt: now }, $unset: { name: 1, email: 1, phone: 1, nameKey: 1, mergedIdentity: 1 } },
    );
    return true;
  }

  /**
   * What merges kept of the person (contract section 22): the contacts merged into this one are the same person, so
   * they are erased too; the merges' plans (the values an undo would restore) go, which makes those merges final.
   */
  private async mergeCopies({ companyId, contactId }: Subject & { contactId: Types.ObjectId }, now: Date): Promise<boolean> {
    await this.collection('contacts').updateMany(
      { companyId, mergedInto: contactId, erasedAt: { $exists: false } },
      { $set: { tags: [], attributes: {}, erasedAt: now, updatedAt: now }, $unset: { name: 1, email: 1, phone: 1, nameKey: 1, mergedIdentity: 1 } },
    );
    await this.collection('contact_merges').updateMany(
      { companyId, $or: [{ targetId: contactId }, { sourceIds: contactId }], plan: { $type: 'object' } },
      { $set: { plan: null, erasedAt: now } },
    );
    return true;
  }

  private collection(name: string): mongo.Collection {
    const db = this.connection.db;
    if (!db) throw new Error('The database connection is not open');
    return db.collection(name);
  }
}
