import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { Types, type QueryFilter } from 'mongoose';
import { ChannelsService } from '../channels/channels.service.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import { channelOf } from '../channels/channel-key.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { assertInScope, type ChannelScope } from '../events/event-channel.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { MAX_MESSAGE_TEXT_LENGTH, type MessageTemplateUse } from '../messages/message.schema.js';
import { canonicalLanguage } from '../settings/dto/settings.validators.js';
import type { CreateMessageTemplateDto } from './dto/create-message-template.dto.js';
import type { ListMessageTemplatesQueryDto } from './dto/list-message-templates-query.dto.js';
import type { ReportTemplateStatusDto } from './dto/report-template-status.dto.js';
import type { SendTemplateDto } from './dto/send-template.dto.js';
import type { MessageTemplate, TemplateStatus } from './message-template.schema.js';
import { DeletedMessageTemplateView, MessageTemplateView } from './message-template.view.js';
import { MessageTemplatesRepository, type NewMessageTemplate } from './message-templates.repository.js';
import { countPlaceholders, renderTemplate } from './template-body.js';
import { changesMade, stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { AuditTrail } from '../audit/audit-trail.js';

/** Tries of a status report whose template another report moved meanwhile. */
const REPORT_ATTEMPTS = 3;

/** What a template send stores: which template with what, and its rendered text. */
export interface PreparedTemplate {
  template: MessageTemplateUse;
  text: string;
}

/**
 * Message templates (contract section 17): created `pending` by the company, approved or rejected by the channel
 * as its connector reports, sent by name once approved. Status changes are written with `template.status_changed`,
 * creation included (from null to `pending`), so that a connector can submit a new template when it is created.
 */
@Injectable()
export class MessageTemplatesService {
  constructor(
    private readonly templates: MessageTemplatesRepository,
    private readonly channels: ChannelsService,
    private readonly audit: AuditTrail,
  ) {}

  /** `scope`: the channels the caller's key is limited to: only their templates, and 403 when asked for another. */
  async list(companyId: CompanyId, query: ListMessageTemplatesQueryDto, scope: ChannelScope = null): Promise<Page<MessageTemplateView>> {
    const filter: QueryFilter<MessageTemplate> = {};
    if (query.channel !== undefined) {
      filter.channel = channelOf(query.channel);
      assertInScope(scope, filter.channel, 'the channel asked for');
    } else if (scope !== null) {
      filter.channel = { $in: [...scope] };
    }
    if (query.status !== undefined) filter.status = query.status;
    return mapPage(await this.templates.page(companyId, filter, { limit: query.limit, cursor: query.cursor }), MessageTemplateView.from);
  }

  async get(companyId: CompanyId, id: string, scope: ChannelScope = null): Promise<MessageTemplateView> {
    return MessageTemplateView.from(await this.stored(companyId, id, scope));
  }

  /** 400 for a channel without a record or a body whose placeholders have a gap; 409 when channel + name + language is taken. */
  async create(companyId: CompanyId, dto: CreateMessageTemplateDto, origin: AuditOrigin): Promise<MessageTemplateView> {
    const channel = channelOf(dto.channel);
    const placeholderCount = countPlaceholders(dto.body);
    if (typeof placeholderCount === 'string') throw new RequestValidationException([{ field: 'body', message: placeholderCount }]);
    if (!(await this.channels.find(companyId, channel))) {
      throw new RequestValidationException([
        { field: 'channel', message: `channel must be the key of one of your channels; there is none with key ${channel} (POST /v1/channels)` },
      ]);
    }
    const language = canonicalLanguage(dto.language)!;
    try {
      const record = { channel, name: dto.name, language, category: dto.category, body: dto.body, placeholderCount, status: 'pending' as const, rejectionReason: null };
      const _id = new Types.ObjectId();
      const entry = stageAudit(origin, 'template.created', { type: 'template', id: _id.toHexString() }, changesMade(null, record));
      const stored = await this.templates.insert(companyId, { _id, ...record, pendingAudit: [entry] } as NewMessageTemplate, (template) => [statusChanged(template, null)]);
      this.audit.written(companyId, this.templates.collectionName, _id, [entry]);
      return MessageTemplateView.from(stored);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      throw new ConflictException(`A template named ${dto.name} in ${language} already exists on channel ${channel}`);
    }
  }

  /** Messages already sent with it keep what they sent. */
  async remove(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<DeletedMessageTemplateView> {
    const _id = parseObjectId(id);
    if (!_id) throw this.notFound(id);
    const entry = stageAudit(origin, 'template.deleted', { type: 'template', id: _id.toHexString() });
    if (!(await this.templates.removeAudited(companyId, { _id }, entry))) throw this.notFound(id);
    this.audit.written(companyId, this.templates.collectionName, _id, [entry]);
    return { id: _id.toHexString(), deleted: true };
  }

  /**
   * The channel's verdict, as the connector reports it: a new status is written with `template.status_changed`
   * (`rejectionReason` kept only with `rejected`); the status it has already changes nothing and emits nothing.
   */
  async report(companyId: CompanyId, id: string, dto: ReportTemplateStatusDto, origin?: AuditOrigin, scope: ChannelScope = null): Promise<MessageTemplateView> {
    let current = await this.stored(companyId, id, scope);
    for (let attempt = 1; ; attempt += 1) {
      if (current.status === dto.status) return MessageTemplateView.from(current);
      const previous = current.status;
      const set = { status: dto.status, rejectionReason: dto.status === 'rejected' ? (dto.rejectionReason ?? null) : null };
      const entry = origin && stageAudit(origin, 'template.status_reported', { type: 'template', id: current._id.toHexString() }, changesMade(current, set));
      const changed = await this.templates.changeStatus(companyId, current, set, (after) => [statusChanged(after, previous)], entry);
      if (changed && entry) this.audit.written(companyId, this.templates.collectionName, current._id, [entry]);
      if (changed) return MessageTemplateView.from(changed);
      if (attempt === REPORT_ATTEMPTS) throw new ConflictException(`Template ${id} was changed by another request; report again`);
      current = await this.stored(companyId, id);
    }
  }

  /**
   * What sending `use` on `channel` stores: the template and its body with the variables in place. 400 naming the
   * field (under `field`) when the channel has no approved template of that name and language, or the variables do
   * not match its placeholders.
   */
  async prepare(companyId: CompanyId, channel: string, use: SendTemplateDto, field = 'template'): Promise<PreparedTemplate> {
    const language = canonicalLanguage(use.language) ?? use.language;
    const variables = use.variables ?? [];
    const template = await this.templates.findByName(companyId, channel, use.name, language);
    if (template?.status !== 'approved') {
      const state = template ? `is ${template.status}: only approved templates can be sent` : 'does not exist';
      throw new RequestValidationException([{ field: `${field}.name`, message: `template ${use.name} in ${language} on channel ${channel} ${state}` }]);
    }
    if (variables.length !== template.placeholderCount) {
      throw new RequestValidationException([
        {
          field: `${field}.variables`,
          message: `template ${use.name} takes ${template.placeholderCount} variables ({{1}}..{{${template.placeholderCount}}}); ${variables.length} given`,
        },
      ]);
    }
    const text = renderTemplate(template.body, variables);
    if (text.length > MAX_MESSAGE_TEXT_LENGTH) {
      throw new RequestValidationException([{ field: `${field}.variables`, message: `the template with these variables is longer than ${MAX_MESSAGE_TEXT_LENGTH} characters` }]);
    }
    return { template: { id: template._id, name: template.name, language: template.language, variables }, text };
  }

  /** 404 for a missing, malformed or foreign id; 403 for a template on a channel outside `scope`. */
  private async stored(companyId: CompanyId, id: string, scope: ChannelScope = null): Promise<Stored<MessageTemplate>> {
    const template = await this.templates.findById(companyId, id);
    if (!template) throw this.notFound(id);
    assertInScope(scope, template.channel, `template ${id}`);
    return template;
  }

  private notFound(id: string): NotFoundException {
    return new NotFoundException(`Message template ${id} not found`);
  }
}

function statusChanged(template: Stored<MessageTemplate>, previousStatus: TemplateStatus | null) {
  return stageEvent('template.status_changed', { template: MessageTemplateView.from(template), previousStatus }, { occurredAt: template.updatedAt });
}
