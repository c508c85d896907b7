import { BadRequestException, Injectable, Logger, NotFoundException } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { Types } from 'mongoose';
import type { AgentPrincipal, ApiKeyPrincipal } from '../auth/auth-principal.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import type { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { AppConfig } from '../config/app-config.js';
import { toObjectId } from '../database/object-id.js';
import { insertWithinCap } from '../database/tenancy/insert-within-cap.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeyView, CreatedApiKeyView } from './api-key.view.js';
import type { CreateApiKeyDto } from './dto/create-api-key.dto.js';
import { BoundedMap } from '../common/bounded-map.js';
import { diff, stageAudit, SYSTEM_ORIGIN, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import type { ApiKey } from './api-key.schema.js';

const KEY_PREFIX = 'pk_';
/** What an API key's audit entries show (never the key or its hash). */
const AUDITED_FIELDS = ['name', 'scopes', 'channels', 'expiresAt'] as const;
/** `lastUsedAt` is written at most this often per key. */
export const LAST_USED_RESOLUTION_MS = 60_000;
/** How many keys this process remembers having marked used, before it forgets the oldest. */
const TOUCHED_MAX = 10_000;

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * Keys are 256 random bits, so a fast SHA-256 is a sound way to store them (a slow password hash
 * would only slow every Interface B request down); the lookup is by that hash. A key stops working when
 * it is revoked, when it expires (`expiresAt`), and when the admin who created it is deactivated or demoted.
 */
@Injectable()
export class ApiKeysService {
  private readonly logger = new Logger('ApiKeys');
  /** When this process last marked each key used: at most one write a minute per key, without a read. */
  private readonly touched = new BoundedMap<string, number>(TOUCHED_MAX);

  constructor(
    private readonly apiKeys: ApiKeysRepository,
    private readonly config: AppConfig,
    private readonly audit: AuditTrail,
  ) {}

  async create(agent: AgentPrincipal, dto: CreateApiKeyDto, origin: AuditOrigin): Promise<CreatedApiKeyView> {
    return this.issue(agent.companyId, dto, agent.agentId, origin);
  }

  /**
   * Also used by the demo seed. At most API_KEYS_PER_COMPANY keys of a company may be active (neither
   * revoked nor expired), also under concurrent creates: minting keys buys no extra rate-limit room.
   */
  async issue(companyId: CompanyId, dto: CreateApiKeyDto, createdBy: string, origin: AuditOrigin = SYSTEM_ORIGIN): Promise<CreatedApiKeyView> {
    const expiresAt = dto.expiresAt === undefined ? null : new Date(dto.expiresAt);
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw new RequestValidationException([{ field: 'expiresAt', message: 'expiresAt must be in the future' }]);
    }
    const key = KEY_PREFIX + randomBytes(32).toString('base64url');
    const cap = this.config.apiKeysPerCompany;
    const _id = new Types.ObjectId();
    const entry = stageAudit(
      origin,
      'api_key.created',
      { type: 'api_key', id: _id.toHexString() },
      diff(null, { name: dto.name, scopes: dto.scopes, channels: dto.channels ?? null, expiresAt }, AUDITED_FIELDS),
    );
    const stored = await insertWithinCap({
      cap,
      count: () => this.apiKeys.countActive(companyId, new Date()),
      insert: () =>
        this.apiKeys.create(companyId, {
          _id,
          pendingAudit: [entry],
          name: dto.name,
          scopes: dto.scopes,
          ...(dto.channels ? { channels: dto.channels } : {}),
          keyHash: hashKey(key),
          keyPrefix: key.slice(0, KEY_PREFIX.length + 4),
          createdBy: toObjectId(createdBy),
          expiresAt,
          lastUsedAt: null,
          revokedAt: null,
          revokedReason: null,
        } as Partial<ApiKey>),
      undo: async (created) => void (await this.apiKeys.deleteOne(companyId, { _id: created._id })),
    });
    if (!stored) throw new BadRequestException(`A company can have at most ${cap} active API keys: revoke one first`);
    this.audit.written(companyId, this.apiKeys.collectionName, _id, [entry]);
    return { ...ApiKeyView.from(stored), key };
  }

  async list(companyId: CompanyId, query: PageQueryDto): Promise<Page<ApiKeyView>> {
    return mapPage(await this.apiKeys.page(companyId, {}, { limit: query.limit, cursor: query.cursor }), ApiKeyView.from);
  }

  /** Revocation is immediate: the next request with the key is refused. Revoking twice is harmless. */
  async revoke(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<ApiKeyView> {
    const existing = await this.apiKeys.findById(companyId, id);
    if (!existing) throw new NotFoundException(`API key ${id} not found`);
    if (existing.revokedAt) return ApiKeyView.from(existing);
    const entry = stageAudit(origin, 'api_key.revoked', { type: 'api_key', id: existing._id.toHexString() }, null);
    const revoked = await this.apiKeys.updateOne(
      companyId,
      { _id: existing._id, revokedAt: null },
      withAudit({ $set: { revokedAt: new Date(), revokedReason: 'revoked' } }, entry),
    );
    if (revoked) this.audit.written(companyId, this.apiKeys.collectionName, existing._id, [entry]);
    return ApiKeyView.from(revoked ?? existing);
  }

  /**
   * The agent was deactivated, or is no longer an admin: the keys it created stop working with it (an admin's
   * keys carry an admin's powers, such as managing webhooks, which its new role does not have).
   */
  async revokeCreatedBy(companyId: CompanyId, agentId: Types.ObjectId, reason: 'creator_deactivated' | 'creator_demoted'): Promise<number> {
    return this.apiKeys.revokeCreatedBy(companyId, agentId, reason, new Date());
  }

  async authenticate(presentedKey: string): Promise<ApiKeyPrincipal | null> {
    if (!presentedKey.startsWith(KEY_PREFIX) || presentedKey.length > 200) return null;
    const apiKey = await this.apiKeys.findActiveByHash(hashKey(presentedKey));
    const now = Date.now();
    if (!apiKey || (apiKey.expiresAt && apiKey.expiresAt.getTime() <= now)) return null;
    this.markUsed(apiKey.companyId, apiKey._id, apiKey.lastUsedAt, now);
    return {
      kind: 'api-key',
      apiKeyId: apiKey._id.toHexString(),
      companyId: apiKey.companyId.toHexString(),
      scopes: apiKey.scopes,
      channels: apiKey.channels?.length ? apiKey.channels : null,
    };
  }

  /** Writes `lastUsedAt` when the last one is a minute old, without making the request wait for it. */
  private markUsed(companyId: Types.ObjectId, id: Types.ObjectId, lastUsedAt: Date | null, now: number): void {
    const key = id.toHexString();
    const last = Math.max(lastUsedAt?.getTime() ?? 0, this.touched.get(key) ?? 0);
    if (now - last < LAST_USED_RESOLUTION_MS) return;
    this.touched.delete(key);
    this.touched.set(key, now);
    this.apiKeys.touchLastUsed(companyId, id, new Date(now), LAST_USED_RESOLUTION_MS).catch((error: unknown) => {
      this.logger.warn(`Could not record the use of API key ${key}: ${(error as Error).message}`);
    });
  }
}
