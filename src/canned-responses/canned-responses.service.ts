import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { parseObjectId } from '../database/object-id.js';
import { insertWithinCap } from '../database/tenancy/insert-within-cap.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { MAX_CANNED_RESPONSES_PER_COMPANY, type CannedResponse } from './canned-response.schema.js';
import { CannedResponseView, DeletedCannedResponseView } from './canned-response.view.js';
import { CannedResponsesRepository } from './canned-responses.repository.js';
import type { CreateCannedResponseDto } from './dto/create-canned-response.dto.js';
import type { ListCannedResponsesQueryDto } from './dto/list-canned-responses-query.dto.js';
import type { UpdateCannedResponseDto } from './dto/update-canned-response.dto.js';
import { placeholderProblem, renderPlaceholders, type PlaceholderValues } from './placeholders.js';
import { changesMade, stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import { Types } from 'mongoose';

/**
 * Canned responses (contract section 15): short codes unique per company (the unique index refuses a duplicate, also
 * between concurrent requests: 409), placeholders checked on every save, at most MAX_CANNED_RESPONSES_PER_COMPANY
 * per company.
 */
@Injectable()
export class CannedResponsesService {
  constructor(
    private readonly responses: CannedResponsesRepository,
    private readonly audit: AuditTrail,
  ) {}

  async list(companyId: CompanyId, query: ListCannedResponsesQueryDto): Promise<Page<CannedResponseView>> {
    const page = await this.responses.pageByShortCode(companyId, { search: query.search, cursor: query.cursor, limit: query.limit });
    return mapPage(page, CannedResponseView.from);
  }

  async get(companyId: CompanyId, id: string): Promise<CannedResponseView> {
    return CannedResponseView.from(await this.existing(companyId, id));
  }

  async create(companyId: CompanyId, dto: CreateCannedResponseDto, origin: AuditOrigin): Promise<CannedResponseView> {
    assertPlaceholders(dto.content);
    const record = { shortCode: dto.shortCode, title: dto.title, content: dto.content };
    const _id = new Types.ObjectId();
    const entry = stageAudit(origin, 'canned_response.created', { type: 'canned_response', id: _id.toHexString() }, changesMade(null, record));
    const created = await this.conflictOr(dto.shortCode, () =>
      insertWithinCap({
        cap: MAX_CANNED_RESPONSES_PER_COMPANY,
        count: () => this.responses.count(companyId),
        insert: () => this.responses.create(companyId, { _id, ...record, pendingAudit: [entry] } as Partial<CannedResponse>),
        undo: async (response) => void (await this.responses.deleteOne(companyId, { _id: response._id })),
      }),
    );
    if (!created) {
      throw new BadRequestException(`A company can have at most ${MAX_CANNED_RESPONSES_PER_COMPANY} canned responses; delete one first`);
    }
    this.audit.written(companyId, this.responses.collectionName, _id, [entry]);
    return CannedResponseView.from(created);
  }

  /** Only the fields sent change. */
  async update(companyId: CompanyId, id: string, dto: UpdateCannedResponseDto, origin: AuditOrigin): Promise<CannedResponseView> {
    const existing = await this.existing(companyId, id);
    if (dto.content !== undefined) assertPlaceholders(dto.content);
    const set: Partial<CannedResponse> = {};
    if (dto.shortCode !== undefined) set.shortCode = dto.shortCode;
    if (dto.title !== undefined) set.title = dto.title;
    if (dto.content !== undefined) set.content = dto.content;
    if (Object.keys(set).length === 0) return CannedResponseView.from(existing);
    const entry = stageAudit(
      origin,
      'canned_response.updated',
      { type: 'canned_response', id: existing._id.toHexString() },
      changesMade(existing, set),
    );
    const updated = await this.conflictOr(dto.shortCode ?? existing.shortCode, () =>
      this.responses.updateOne(companyId, { _id: existing._id }, withAudit({ $set: set }, entry)),
    );
    if (!updated) throw this.notFound(id);
    this.audit.written(companyId, this.responses.collectionName, existing._id, [entry]);
    return CannedResponseView.from(updated);
  }

  async remove(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<DeletedCannedResponseView> {
    const _id = parseObjectId(id);
    if (!_id) throw this.notFound(id);
    const entry = stageAudit(origin, 'canned_response.deleted', { type: 'canned_response', id: _id.toHexString() });
    if (!(await this.responses.removeAudited(companyId, { _id }, entry))) throw this.notFound(id);
    this.audit.written(companyId, this.responses.collectionName, _id, [entry]);
    return { id: _id.toHexString(), deleted: true };
  }

  /**
   * The response's content rendered with `values`, for sending it. `id` comes from a request body: a missing,
   * malformed or other company's one is a 400 naming `field`.
   */
  async render(companyId: CompanyId, id: string, values: PlaceholderValues, field: string): Promise<string> {
    const response = await this.responses.findById(companyId, id);
    if (!response) throw new RequestValidationException([{ field, message: `${field} is not a canned response of your company` }]);
    return renderPlaceholders(response.content, values);
  }

  private async existing(companyId: CompanyId, id: string): Promise<Stored<CannedResponse>> {
    const response = await this.responses.findById(companyId, id);
    if (!response) throw this.notFound(id);
    return response;
  }

  private notFound(id: string): NotFoundException {
    return new NotFoundException(`Canned response ${id} not found`);
  }

  private async conflictOr<T>(shortCode: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      throw new ConflictException(`A canned response with shortCode "${shortCode}" already exists in your company`);
    }
  }
}

function assertPlaceholders(content: string): void {
  const problem = placeholderProblem(content);
  if (problem) throw new RequestValidationException([{ field: 'content', message: problem }]);
}
