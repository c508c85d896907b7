import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { ZipArchive } from 'archiver';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { mongo, type Connection, type Types } from 'mongoose';
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
 * for then, builds it anew from the start (the half-written file is removed first).
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
    const claimed = await this.requests.transition(
      timer.companyId,
      { _id: timer.key, type: 'export', status: { $in: ['pending', 'running'] }, $or: [{ leaseUntil: null }, { leaseUntil: { $lte: now } }] },
      { $set: { status: 'running', leaseUntil: new Date(now.getTime() + BUILD_LEASE_MS) } },
    );
    if (!claimed) {
      const request = await this.requests.findById(timer.companyId, timer.key);
      if (!request) return notStoredYet(timer);
      // Another builder holds it: look again when its lease would lapse.
      if (request?.status === 'running' && request.leaseUntil) await this.timers.set(timer.companyId, EXPORT_TIMER, timer.key, request.leaseUntil);
      return;
    }
    const contact = (await this.collection('contacts').findOne({ _id: claimed.contactId, companyId: claimed.companyId })) as Stored<Contact> | null;
    if (!contact || contact.erasedAt) return this.finish(claimed, null, 'contact_erased');
    await this.files.delete(claimed.companyId, claimed._id);
    await this.build(claimed, contact);
    await this.finish(claimed, claimed._id, null);
  }

  private async build(request: Stored<PrivacyRequest>, contact: Stored<Contact>): Promise<void> {
    const archive = new ZipArchive({ zlib: { level: 6 }, highWaterMark: ARCHIVE_BUFFER_BYTES });
    const upload = this.files.openUpload(request.companyId, request._id, `contact-${request.contactId.toHexString()}.zip`);
    const written = pipeline(archive, upload);
    let renewedAt = Date.now();
    const renew = async () => {
      if (Date.now() - renewedAt < RENEW_EVERY_MS) return;
      renewedAt = Date.now();
      await this.requests.transition(
        request.companyId,
        { _id: request._id, status: 'running' },
        { $set: { leaseUntil: new Date(this.clock.now().getTime() + BUILD_LEASE_MS) } },
      );
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
      await this.files.delete(request.companyId, request._id);
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

  private async finish(request: Stored<PrivacyRequest>, fileId: Types.ObjectId | null, failureReason: string | null): Promise<void> {
    const completedAt = this.clock.now();
    const status = failureReason ? ('failed' as const) : ('completed' as const);
    const set = { status, fileId, failureReason, completedAt, leaseUntil: null };
    const after = { ...request, ...set, updatedAt: completedAt };
    const done = await this.requests.transition(request.companyId, { _id: request._id, status: 'running' }, { $set: set }, [
      stageEvent('privacy_request.completed', { request: PrivacyRequestView.from(after) }, { id: `evt_privacy_${request._id.toHexString()}` }),
    ]);
    if (done) this.logger.log(`Export ${request._id.toHexString()} ${status}`);
  }

  private collection(name: string): mongo.Collection {
    const db = this.connection.db;
    if (!db) throw new Error('The database connection is not open');
    return db.collection(name);
  }
}
