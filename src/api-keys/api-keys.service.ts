import { Injectable, NotFoundException } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { mapPage, type Page } from '../common/pagination/page.js';
import type { PageQueryDto } from '../common/pagination/page-query.dto.js';
import type { AgentPrincipal, ApiKeyPrincipal } from '../auth/auth-principal.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { ApiKeyView, CreatedApiKeyView } from './api-key.view.js';
import type { CreateApiKeyDto } from './dto/create-api-key.dto.js';

const KEY_PREFIX = 'pk_';

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/**
 * Keys are 256 random bits, so a fast SHA-256 is a sound way to store them (a slow password hash
 * would only slow every Interface B request down); the lookup is by that hash.
 */
@Injectable()
export class ApiKeysService {
  constructor(private readonly apiKeys: ApiKeysRepository) {}

  async create(agent: AgentPrincipal, dto: CreateApiKeyDto): Promise<CreatedApiKeyView> {
    return this.issue(agent.companyId, dto, agent.agentId);
  }

  /** Also used by the demo seed, which has no agent principal yet. */
  async issue(companyId: CompanyId, dto: CreateApiKeyDto, createdBy?: string): Promise<CreatedApiKeyView> {
    const key = KEY_PREFIX + randomBytes(32).toString('base64url');
    const stored = await this.apiKeys.create(companyId, {
      name: dto.name,
      scopes: dto.scopes,
      keyHash: hashKey(key),
      keyPrefix: key.slice(0, KEY_PREFIX.length + 4),
      createdBy: createdBy ? toObjectId(createdBy) : undefined,
      revokedAt: null,
    });
    return { ...ApiKeyView.from(stored), key };
  }

  async list(companyId: CompanyId, query: PageQueryDto): Promise<Page<ApiKeyView>> {
    return mapPage(await this.apiKeys.page(companyId, {}, { limit: query.limit, cursor: query.cursor }), ApiKeyView.from);
  }

  /** Revocation is immediate: the next request with the key is refused. Revoking twice is harmless. */
  async revoke(companyId: CompanyId, id: string): Promise<ApiKeyView> {
    const existing = await this.apiKeys.findById(companyId, id);
    if (!existing) throw new NotFoundException(`API key ${id} not found`);
    if (existing.revokedAt) return ApiKeyView.from(existing);
    const revoked = await this.apiKeys.updateOne(companyId, { _id: existing._id }, { revokedAt: new Date() });
    return ApiKeyView.from(revoked ?? existing);
  }

  async authenticate(presentedKey: string): Promise<ApiKeyPrincipal | null> {
    if (!presentedKey.startsWith(KEY_PREFIX) || presentedKey.length > 200) return null;
    const apiKey = await this.apiKeys.findActiveByHash(hashKey(presentedKey));
    if (!apiKey) return null;
    return {
      kind: 'api-key',
      apiKeyId: apiKey._id.toHexString(),
      companyId: apiKey.companyId.toHexString(),
      scopes: apiKey.scopes,
    };
  }
}
