import { ConflictException, GoneException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { Types, type Connection, type QueryFilter } from 'mongoose';
import { stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import { AppConfig } from '../config/app-config.js';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';
import { DurableTimers } from '../lanes/durable-timers.js';
import { ERASE_TIMER } from './contact-erasure.js';
import { EXPORT_TIMER } from './contact-export.js';
import type { EraseContactDto, ExportContactDto, ListPrivacyRequestsQueryDto } from './dto/privacy-requests.dto.js';
import { ExportFiles } from './export-files.js';
import { ExportLinks } from './export-links.js';
import type { PrivacyRequest, PrivacyRequestType } from './privacy-request.schema.js';
import { PrivacyRequestView } from './privacy-request.view.js';
import { PrivacyRequestsRepository } from './privacy-requests.repository.js';

/**
 * Privacy requests (contract section 23): an export or an erasure of one contact, accepted at once (202) and
 * carried out by a durable timer (ContactExport, ContactErasure); an erasure waits PRIVACY_ERASE_DELAY_HOURS and can
 * be cancelled until it starts.
 */
@Injectable()
export class PrivacyRequestsService {
  private readonly eraseDelayMs: number;

  constructor(
    config: AppConfig,
    @InjectConnection() private readonly connection: Connection,
    private readonly requests: PrivacyRequestsRepository,
    private readonly timers: DurableTimers,
    private readonly clock: Clock,
    private readonly audit: AuditTrail,
    private readonly links: ExportLinks,
    private readonly files: ExportFiles,
  ) {
    this.eraseDelayMs = config.privacyEraseDelayHours * 3_600_000;
  }

  /** 404 for no such contact, 410 once erased, 409 while it is under a legal hold. One erasure at a time per contact. */
  async erase(companyId: CompanyId, contactId: string, dto: EraseContactDto, origin: AuditOrigin): Promise<PrivacyRequestView> {
    const contact = await this.contact(companyId, contactId);
    if (contact.legalHold) throw new ConflictException(`Contact ${contactId} is under a legal hold: it cannot be erased until an admin lifts it`);
    const open = await this.requests.findOne(companyId, { contactId: contact._id, type: 'erase', status: { $in: ['pending', 'running'] } });
    if (open) return this.view(open);
    return this.open(
      companyId,
      'erase',
      contact._id,
      { reason: dto.reason ?? null, dueAt: new Date(this.clock.now().getTime() + this.eraseDelayMs) },
      origin,
    );
  }

  async export(companyId: CompanyId, contactId: string, dto: ExportContactDto, origin: AuditOrigin): Promise<PrivacyRequestView> {
    const contact = await this.contact(companyId, contactId);
    return this.open(companyId, 'export', contact._id, { includeNotes: dto.includeNotes ?? false, dueAt: this.clock.now() }, origin);
  }

  async list(companyId: CompanyId, query: ListPrivacyRequestsQueryDto): Promise<Page<PrivacyRequestView>> {
    const filter: QueryFilter<PrivacyRequest> = {};
    if (query.contactId) filter.contactId = new Types.ObjectId(query.contactId);
    if (query.type) filter.type = query.type;
    if (query.status) filter.status = query.status;
    return mapPage(await this.requests.page(companyId, filter, { limit: query.limit, cursor: query.cursor }), (request) => this.view(request));
  }

  async get(companyId: CompanyId, id: string): Promise<PrivacyRequestView> {
    return this.view(await this.stored(companyId, id));
  }

  /** Only while pending (409 otherwise): the timer goes, nothing was done. */
  async cancel(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<PrivacyRequestView> {
    const current = await this.stored(companyId, id);
    const entry = stageAudit(origin, `privacy_request.cancelled`, { type: 'privacy_request', id });
    const cancelled = await this.requests.transition(
      companyId,
      { _id: current._id, status: 'pending' },
      withAudit({ $set: { status: 'cancelled', completedAt: this.clock.now() } }, entry),
    );
    if (!cancelled) throw new ConflictException(`Privacy request ${id} is ${current.status}: only a pending request can be cancelled`);
    this.audit.written(companyId, this.requests.collectionName, current._id, [entry]);
    await this.timers.cancel(companyId, current.type === 'erase' ? ERASE_TIMER : EXPORT_TIMER, id);
    return this.view(cancelled);
  }

  /** The ZIP a signed link names (404 once it is gone: erased, or never built). */
  async download(companyId: Types.ObjectId, requestId: Types.ObjectId) {
    const request = await this.requests.findOne(companyId, { _id: requestId, type: 'export', status: 'completed' });
    const file = request?.fileId ? await this.files.open(companyId, request.fileId) : null;
    if (!file) throw new NotFoundException('This export is no longer available');
    return file;
  }

  private async open(
    companyId: CompanyId,
    type: PrivacyRequestType,
    contactId: Types.ObjectId,
    fields: Partial<PrivacyRequest> & { dueAt: Date },
    origin: AuditOrigin,
  ): Promise<PrivacyRequestView> {
    const _id = new Types.ObjectId();
    const entry = stageAudit(
      origin,
      type === 'erase' ? 'contact.erasure_requested' : 'contact.export_requested',
      { type: 'contact', id: contactId.toHexString() },
      null,
    );
    // The timer first: a crash before the request is stored leaves a timer that finds nothing (see the handlers).
    await this.timers.set(companyId, type === 'erase' ? ERASE_TIMER : EXPORT_TIMER, _id.toHexString(), fields.dueAt);
    const created = await this.requests.create(companyId, {
      _id,
      type,
      contactId,
      status: 'pending',
      ...fields,
      pendingAudit: [entry],
    } as Partial<PrivacyRequest>);
    this.audit.written(companyId, this.requests.collectionName, _id, [entry]);
    return this.view(created);
  }

  private view(request: Stored<PrivacyRequest>): PrivacyRequestView {
    const link =
      request.status === 'completed' && request.fileId && request.completedAt
        ? this.links.sign(request.companyId, request._id, request.completedAt)
        : null;
    return PrivacyRequestView.from(request, link && link.expiresAt > this.clock.now() ? link : null);
  }

  private async contact(companyId: CompanyId, id: string): Promise<{ _id: Types.ObjectId; legalHold?: boolean }> {
    const _id = parseObjectId(id);
    const contact =
      _id &&
      (await this.connection
        .db!.collection('contacts')
        .findOne({ _id, companyId: new Types.ObjectId(String(companyId)) }, { projection: { legalHold: 1, erasedAt: 1 } }));
    if (!contact) throw new NotFoundException(`Contact ${id} not found`);
    if (contact.erasedAt) throw new GoneException(`Contact ${id} has been erased`);
    return contact as { _id: Types.ObjectId; legalHold?: boolean };
  }

  private async stored(companyId: CompanyId, id: string): Promise<Stored<PrivacyRequest>> {
    return (await this.requests.findById(companyId, id)) ?? this.notFound(id);
  }

  private notFound(id: string): never {
    throw new NotFoundException(`Privacy request ${id} not found`);
  }
}
