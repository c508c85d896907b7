import { BadRequestException, ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import { Types, type UpdateQuery } from 'mongoose';
import { mapPage, type Page } from '../common/pagination/page.js';
import type { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { insertWithinCap } from '../database/tenancy/insert-within-cap.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { scopeCovers, type ChannelScope } from '../events/event-channel.js';
import { WebhookDeliveryLanes } from './delivery/webhook-delivery-lanes.js';
import { generateWebhookSecret } from './delivery/webhook-signature.js';
import type { CreateWebhookDto } from './dto/create-webhook.dto.js';
import type { UpdateWebhookDto } from './dto/update-webhook.dto.js';
import { DeletedWebhookView, WebhookView, type CreatedWebhookView } from './webhook.view.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { parsePublicId, WEBHOOK_ID_PREFIX, webhookPublicId } from './webhook-ids.js';
import { WebhookSecretBox } from './webhook-secret-box.js';
import { WebhookUrlPolicy } from './webhook-url.policy.js';
import { DEFAULT_RETRY_CONFIG, type Webhook } from './webhook.schema.js';
import { markDueUpdate } from '../lanes/lane-store.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { diff, stageAudit, type AuditOrigin, type StagedAuditEntry } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';

/** Bounds the fan-out of one event and Interface B's list, which has no pages. */
export const MAX_WEBHOOKS_PER_COMPANY = 100;
/** What a webhook's audit entries show; its secret only as "[changed]". */
const AUDITED_FIELDS = ['name', 'url', 'events', 'channels', 'retryConfig', 'isActive', 'secret'] as const;

/** The webhook rules, for both interfaces: the controllers differ only in how they answer. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly secrets: WebhookSecretBox,
    private readonly urls: WebhookUrlPolicy,
    private readonly lanes: WebhookDeliveryLanes,
    private readonly audit: AuditTrail,
  ) {}

  /**
   * Answers the webhook with its signing secret, which is never shown again. The cap holds under concurrent
   * creates too (insert, count, take back: see insertWithinCap). `scope`: the channels the caller's key is limited
   * to; its webhook gets them when it names none, and may not name another (403).
   */
  async create(companyId: CompanyId, dto: CreateWebhookDto, origin: AuditOrigin, scope: ChannelScope = null): Promise<CreatedWebhookView> {
    // null means every channel: beyond a limited scope.
    if (scope !== null) dto = { ...dto, channels: dto.channels === undefined ? [...scope] : withinScope(scope, dto.channels ?? []) };
    await this.urls.assertAllowed(dto.url);
    const secret = generateWebhookSecret();
    const _id = new Types.ObjectId();
    let entry: StagedAuditEntry | null = null;
    const webhook = await insertWithinCap({
      cap: MAX_WEBHOOKS_PER_COMPANY,
      count: () => this.webhooks.count(companyId),
      insert: async () => {
        const record = this.record(dto, secret);
        entry = stageAudit(
          origin,
          'webhook.created',
          { type: 'webhook', id: webhookPublicId(_id) },
          diff(null, { ...record, secret }, AUDITED_FIELDS, { secret: ['secret'] }),
        );
        return this.webhooks.create(companyId, { _id, ...record, pendingAudit: [entry] } as Partial<Webhook>);
      },
      undo: (created) => this.discard(companyId, created._id),
    });
    if (!webhook) throw new BadRequestException(`A company can have at most ${MAX_WEBHOOKS_PER_COMPANY} webhooks`);
    if (entry) this.audit.written(companyId, this.webhooks.collectionName, _id, [entry]);
    return { ...WebhookView.from(webhook), secret };
  }

  private record(dto: CreateWebhookDto, secret: string): Partial<Webhook> {
    return {
      name: dto.name ?? new URL(dto.url).hostname,
      url: dto.url,
      events: dto.events,
      ...(dto.channels ? { channels: dto.channels } : {}),
      retryConfig: {
        maxRetries: dto.retryConfig?.maxRetries ?? DEFAULT_RETRY_CONFIG.maxRetries,
        backoffMs: dto.retryConfig?.backoffMs ?? DEFAULT_RETRY_CONFIG.backoffMs,
      },
      isActive: dto.isActive ?? true,
      disabledReason: null,
      secret: this.secrets.seal(secret),
    };
  }

  async page(companyId: CompanyId, query: PageQueryDto): Promise<Page<WebhookView>> {
    return mapPage(await this.webhooks.page(companyId, {}, { limit: query.limit, cursor: query.cursor }), WebhookView.from);
  }

  /**
   * Every webhook of the company a caller limited to `scope` may see, newest first (at most
   * MAX_WEBHOOKS_PER_COMPANY, so filtered here rather than by a query).
   */
  async all(companyId: CompanyId, scope: ChannelScope = null): Promise<WebhookView[]> {
    const webhooks = await this.webhooks.find(companyId, {}, { sort: { _id: -1 }, limit: MAX_WEBHOOKS_PER_COMPANY });
    return webhooks.filter((webhook) => scopeCovers(scope, webhook.channels)).map(WebhookView.from);
  }

  async get(companyId: CompanyId, id: string, scope: ChannelScope = null): Promise<WebhookView> {
    return WebhookView.from(await this.getStored(companyId, id, scope));
  }

  /**
   * The stored webhook, for the deliveries of this module; 404 for a missing, malformed or foreign id, and for a
   * webhook with channels beyond the caller's `scope` (it does not exist for that key).
   */
  async getStored(companyId: CompanyId, id: string, scope: ChannelScope = null): Promise<Stored<Webhook>> {
    const _id = parsePublicId(WEBHOOK_ID_PREFIX, id);
    const webhook = _id && (await this.webhooks.findOne(companyId, { _id }));
    if (!webhook || !scopeCovers(scope, webhook.channels)) throw new NotFoundException(`Webhook ${id} not found`);
    return webhook;
  }

  /**
   * `isActive: false` pauses (pending deliveries wait, events are not recorded for it); `true` resumes them,
   * clears a disabledReason and receives the events that occur from then on.
   */
  async update(companyId: CompanyId, id: string, dto: UpdateWebhookDto, origin: AuditOrigin, scope: ChannelScope = null): Promise<WebhookView> {
    const existing = await this.getStored(companyId, id, scope);
    // null means every channel: beyond a limited scope.
    if (scope !== null && dto.channels !== undefined) withinScope(scope, dto.channels ?? []);
    if (dto.url !== undefined) await this.urls.assertAllowed(dto.url);
    const { retryConfig, ...fields } = dto;
    const $set: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) $set[key] = value;
    for (const [key, value] of Object.entries(retryConfig ?? {})) if (value !== undefined) $set[`retryConfig.${key}`] = value;
    const update: UpdateQuery<Webhook> = { $set };
    const resuming = dto.isActive === true && !existing.isActive;
    if (resuming) {
      const now = new Date();
      Object.assign($set, { disabledReason: null, activeSince: now });
      Object.assign(update, markDueUpdate<Webhook>(now));
    }
    const after = { ...existing, ...fields, retryConfig: { ...existing.retryConfig, ...retryConfig }, ...(resuming ? { disabledReason: null } : {}) };
    const changes = diff(existing, after, AUDITED_FIELDS);
    const entry =
      Object.keys(changes).length > 0 ? stageAudit(origin, 'webhook.updated', { type: 'webhook', id: webhookPublicId(existing._id) }, changes) : null;
    const updated = await this.webhooks.updateOne(companyId, { _id: existing._id }, entry ? withAudit(update, entry) : update);
    if (!updated) throw new NotFoundException(`Webhook ${id} not found`);
    if (entry) this.audit.written(companyId, this.webhooks.collectionName, existing._id, [entry]);
    if (resuming) this.lanes.wake();
    return WebhookView.from(updated);
  }

  /** Removes the webhook and its deliveries: pending ones are discarded, never attempted. */
  async remove(companyId: CompanyId, id: string, origin: AuditOrigin, scope: ChannelScope = null): Promise<DeletedWebhookView> {
    const _id = scope === null ? parsePublicId(WEBHOOK_ID_PREFIX, id) : (await this.getStored(companyId, id, scope))._id;
    if (!_id) throw new NotFoundException(`Webhook ${id} not found`);
    const entry = stageAudit(origin, 'webhook.deleted', { type: 'webhook', id: webhookPublicId(_id) });
    if (!(await this.webhooks.removeAudited(companyId, { _id }, entry))) throw new NotFoundException(`Webhook ${id} not found`);
    this.audit.written(companyId, this.webhooks.collectionName, _id, [entry]);
    await this.deliveries.deleteMany(companyId, { webhookId: _id });
    return { id, deleted: true };
  }

  private async discard(companyId: CompanyId, _id: Types.ObjectId): Promise<void> {
    if (!(await this.webhooks.deleteOne(companyId, { _id }))) throw new NotFoundException(`Webhook ${String(_id)} not found`);
    await this.deliveries.deleteMany(companyId, { webhookId: _id });
  }
}

/** `channels` when each lies in the caller's `scope` (403 otherwise; an empty list stands for every channel). */
function withinScope(scope: readonly string[], channels: string[]): string[] {
  if (!scopeCovers(scope, channels)) {
    throw new ForbiddenException(`This API key is limited to the channels ${scope.join(', ')}; its webhooks may not reach beyond them`);
  }
  return channels;
}
