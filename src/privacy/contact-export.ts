import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { ZipArchive } from 'archiver';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { mongo, Types, type Connection } from 'mongoose';
import { ContactView } from '../contacts/contact.view.js';
import type { Contact } from '../contacts/contact.schema.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { Clock } from '../lanes/clock.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import { MediaStorage } from '../media/media-storage.js';
import { notStoredYet } from './contact-erasure.js';
import { ExportFiles } from './export-files.js';
import type { PrivacyRequest } from './privacy-request.schema.js';
import { PrivacyRequestView } from './privacy-request.view.js';
import { PrivacyRequestsRepository } from './privacy-requests.repository.js';

export const EXPORT_TIMER = 'privacy-export';
/** How long a builder holds the request; renewed as it goes, so only a dead builder's export is taken over. */
const BUILD_LEASE_MS = 60_000;
const RENEW_EVERY_MS = 15_000;
/**
 * What the ZIP holds ahead of GridFS (archiver's default is 1 MiB on each side of its stream) and how many messages
 * a cursor batch holds: live data that outlives a young-generation GC grows the heap, and the bench's RSS with it.
 */
const ARCHIVE_BUFFER_BYTES = 64 * 1024;
const MESSAGE_BATCH = 100;

/** The build's claim went to another builder (or an erasure removed its file): it stops and leaves the export. */
class ExportTakenOver extends Error {}

/** What an export shows of a message. */
function messageOf(message: mongo.Document): Record<string, unknown> {
  const media = message.media as { id: Types.ObjectId; fileName: string; mimeType: string; size: number } | null;
  return {
    id: String(message._id),
    direction: message.direction,
    type: message.type,
    senderType: message.senderType,
    private: message.private === true,
    text: message.text ?? null,
    caption: message.caption ?? null,
    template: message.template
      ? { name: message.template.name, language: message.template.language, variables: message.template.variables ?? [] }
      : null,
    media: media ? { id: String(media.id), fileName: media.fileName, mimeType: media.mimeType, size: media.size, path: mediaPath(media) } : null,
    createdAt: (message.createdAt as Date).toISOString(),
  };
}

function mediaPath(media: { id: Types.ObjectId; fileName: string }): string {
  return `media/${String(media.id)}-${media.fileName}`;
}

/**
 * Builds a contact's export (contract section 23) on its durable timer: a ZIP streamed into GridFS, with
 * `contact.json`, `conversations.json` (every conversation with its messages, notes only when asked for) and every
 * file under `media/`. Nothing is held whole in memory: conversations.json is written as the messages are read
 * through a cursor, and each file is streamed out of GridFS into the ZIP before the next one is opened. The builder
 * holds a lease on the request, renewed as it goes; a builder that died leaves it to lapse, and the timer, set again
 * for then, builds it anew from the start in a file of its own (the dead one's half-written file is removed first).
 * Only the attempt the request names completes it; one that finds its claim gone (taken over, or its file removed
 * by an erasure) stops, removes its file and looks again later.
 */
@Injectable()
export class ContactExport implements OnModuleInit {
  private readonly logger = new Logger(ContactExport.name);

  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly requests: PrivacyRequestsRepository,
    private readonly timers: DurableTimers,
    private readonly clock: Clock,
    private readonly media: MediaStorage,
    private readonly files: ExportFiles,
  ) {}

  onModuleInit(): void {
    this.timers.register(EXPORT_TIMER, (timer) => this.fire(timer));
  }

  async fire(timer: FiredTimer): Promise<void> {
    const now = this.clock.now();
    const request = await this.requests.findById(timer.companyId, timer.key);
    if (!request) return notStoredYet(timer);
    if (request.type !== 'export' || (request.status !== 'pending' && request.status !== 'running')) return;
    if (request.leaseUntil && request.leaseUntil > now) return this.lookAgainAt(request.leaseUntil, timer);
    // What the builder whose lease lapsed had written: removed before the claim, so a crash between the two leaves
    // nothing that no request names.
    if (request.fileId) await this.files.delete(request.companyId, request.fileId);
    // Each attempt writes a file of its own, named on the request as it claims it: a builder that lost its lease
    // (one that stalled, not died) can then never write into the file of the builder that took over.
    const attempt = new Types.ObjectId();
    const claimed = await this.requests.transition(
      timer.companyId,
      { _id: request._id, status: request.status, leaseUntil: request.leaseUntil, fileId: request.fileId },
      { $set: { status: 'running', leaseUntil: new Date(now.getTime() + BUILD_LEASE_MS), fileId: attempt } },
    );
    // Another builder claimed it just now: look again when its lease would lapse.
    if (!claimed) return this.lookAgainAt(new Date(now.getTime() + BUILD_LEASE_MS), timer);
    const contact = (await this.collection('contacts').findOne({ _id: claimed.contactId, companyId: claimed.companyId })) as Stored<Contact> | null;
    if (!contact || contact.erasedAt) return this.finish(claimed, attempt, 'contact_erased');
    try {
      await this.build(claimed, attempt, contact);
    } catch (error) {
      if (error instanceof ExportTakenOver) return this.lookAgainAt(new Date(now.getTime() + BUILD_LEASE_MS), timer);
      throw error;
    }
    await this.finish(claimed, attempt, null);
  }

  private async lookAgainAt(at: Date, timer: FiredTimer): Promise<void> {
    await this.timers.set(timer.companyId, EXPORT_TIMER, timer.key, at);
  }

  private async build(request: Stored<PrivacyRequest>, attempt: Types.ObjectId, contact: Stored<Contact>): Promise<void> {
    const archive = new ZipArchive({ zlib: { level: 6 }, highWaterMark: ARCHIVE_BUFFER_BYTES });
    const upload = this.files.openUpload(request.companyId, attempt, `contact-${request.contactId.toHexString()}.zip`);
    const written = pipeline(archive, upload);
    let renewedAt = Date.now();
    const renew = async () => {
      if (Date.now() - renewedAt < RENEW_EVERY_MS) return;
      renewedAt = Date.now();
      const renewed = await this.requests.transition(
        request.companyId,
        { _id: request._id, status: 'running', fileId: attempt },
        { $set: { leaseUntil: new Date(this.clock.now().getTime() + BUILD_LEASE_MS) } },
      );
      if (!renewed) throw new ExportTakenOver();
    };
    try {
      const entryDone = () => once(archive, 'entry');
      archive.append(JSON.stringify(ContactView.from(contact), null, 2), { name: 'contact.json' });
      await entryDone();
      archive.append(Readable.from(this.conversationsJson(request)), { name: 'conversations.json' });
      await entryDone();
      for await (const message of this.messagesWithMedia(request)) {
        const media = message.media as { id: Types.ObjectId; fileName: string };
        const file = await this.media.open(request.companyId, String(media.id));
        if (!file) continue;
        archive.append(file.stream, { name: mediaPath(media) });
        await entryDone();
        await renew();
      }
      await archive.finalize();
      await written;
    } catch (error) {
      archive.abort();
      await written.catch(() => undefined);
      await this.files.delete(request.companyId, attempt);
      throw error;
    }
  }

  /** `[ { ...conversation, messages: [...] }, ... ]`, produced as it is read. */
  private async *conversationsJson(request: Stored<PrivacyRequest>): AsyncGenerator<string> {
    const conversations = this.collection('conversations').find({ companyId: request.companyId, contactId: request.contactId }, { sort: { _id: 1 } });
    yield '[';
    let first = true;
    for await (const conversation of conversations) {
      const head = {
        id: String(conversation._id),
        channel: conversation.channel,
        status: conversation.status,
        priority: conversation.priority,
        subject: conversation.subject ?? null,
        tags: conversation.tags ?? [],
        createdAt: (conversation.createdAt as Date).toISOString(),
        closedAt: conversation.closedAt ? (conversation.closedAt as Date).toISOString() : null,
        csat: conversation.csat ? { rating: conversation.csat.rating, comment: conversation.csat.comment ?? null } : null,
      };
      yield `${first ? '' : ','}\n${JSON.stringify(head).slice(0, -1)},"messages":[`;
      first = false;
      let firstMessage = true;
      for await (const message of this.messagesOf(request, conversation._id as Types.ObjectId)) {
        yield `${firstMessage ? '' : ','}\n${JSON.stringify(messageOf(message))}`;
        firstMessage = false;
      }
      yield ']}';
    }
    yield '\n]\n';
  }

  private messagesOf(request: Stored<PrivacyRequest>, conversationId: Types.ObjectId): mongo.FindCursor<mongo.Document> {
    return this.collection('messages').find(
      { companyId: request.companyId, conversationId, ...(request.includeNotes ? {} : { private: { $ne: true } }) },
      { sort: { createdAt: 1, _id: 1 }, batchSize: MESSAGE_BATCH },
    );
  }

  private async *messagesWithMedia(request: Stored<PrivacyRequest>): AsyncGenerator<mongo.Document> {
    const conversations = await this.collection('conversations')
      .find({ companyId: request.companyId, contactId: request.contactId }, { projection: { _id: 1 }, sort: { _id: 1 } })
      .toArray();
    for (const conversation of conversations) {
      for await (const message of this.messagesOf(request, conversation._id as Types.ObjectId)) if (message.media?.id) yield message;
    }
  }

  /** Completes the request with the attempt's file, or fails it; an attempt taken over meanwhile removes its file. */
  private async finish(request: Stored<PrivacyRequest>, attempt: Types.ObjectId, failureReason: string | null): Promise<void> {
    const completedAt = this.clock.now();
    const status = failureReason ? ('failed' as const) : ('completed' as const);
    const set = { status, fileId: failureReason ? null : attempt, failureReason, completedAt, leaseUntil: null };
    const after = { ...request, ...set, updatedAt: completedAt };
    const done = await this.requests.transition(request.companyId, { _id: request._id, status: 'running', fileId: attempt }, { $set: set }, [
      stageEvent('privacy_request.completed', { request: PrivacyRequestView.from(after) }, { id: `evt_privacy_${request._id.toHexString()}` }),
    ]);
    if (done) this.logger.log(`Export ${request._id.toHexString()} ${status}`);
    else if (!failureReason) await this.files.delete(request.companyId, attempt);
  }

  private collection(name: string): mongo.Collection {
    const db = this.connection.db;
    if (!db) throw new Error('The database connection is not open');
    return db.collection(name);
  }
}
