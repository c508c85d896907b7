import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { ReadThroughCache } from '../database/caching/read-through-cache.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { API_KEY_WRITES, ApiKey, type ApiKeyRevocationReason } from './api-key.schema.js';

@Injectable()
export class ApiKeysRepository extends TenantRepository<ApiKey> {
  private readonly byHash = new ReadThroughCache<Stored<ApiKey> | null>(API_KEY_WRITES, {
    // Anyone can send made-up keys: only keys that exist take a place, so a flood of them cannot push the real ones out.
    keep: (key) => key !== null,
  });

  constructor(@InjectModel(ApiKey.name) model: Model<ApiKey>) {
    super(model);
  }

  /**
   * The key's hash is what identifies the company, so this lookup is necessarily cross-tenant. Every
   * Interface B request makes it, so it is served from memory: a revocation in this process applies
   * from the next request on (API_KEY_WRITES), one made by another process within CROSS_PROCESS_STALENESS_MS.
   */
  findActiveByHash(keyHash: string): Promise<Stored<ApiKey> | null> {
    return this.byHash.get(keyHash, () => this.readActiveByHash(keyHash));
  }

  /** Keys neither revoked nor expired at `now`: what the cap on active keys counts. */
  async countActive(companyId: CompanyId, now: Date): Promise<number> {
    return this.count(companyId, { revokedAt: null, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });
  }

  /** Revokes every active key the agent created, for `reason`; answers how many. */
  async revokeCreatedBy(companyId: CompanyId, agentId: Types.ObjectId, reason: ApiKeyRevocationReason, at: Date): Promise<number> {
    return this.updateMany(companyId, { createdBy: agentId, revokedAt: null }, { $set: { revokedAt: at, revokedReason: reason } });
  }

  /**
   * Records a use, unless one was recorded less than `minIntervalMs` before `at` (by any process). Written
   * through the driver's collection on purpose: it is bookkeeping that authentication never reads, and a
   * write through the model would empty the lookup cache of every key, once a minute per key in use.
   */
  async touchLastUsed(companyId: Types.ObjectId, id: Types.ObjectId, at: Date, minIntervalMs: number): Promise<void> {
    const stale = new Date(at.getTime() - minIntervalMs);
    await this.model.collection.updateOne(
      { _id: id, companyId, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lte: stale } }] },
      { $set: { lastUsedAt: at } },
    );
  }

  private async readActiveByHash(keyHash: string): Promise<Stored<ApiKey> | null> {
    return (await this.model
      .findOne({ keyHash, revokedAt: null }, { companyId: 1, scopes: 1, channels: 1, expiresAt: 1, lastUsedAt: 1 })
      .setOptions({ [CROSS_TENANT]: true })
      .lean()
      .exec()) as Stored<ApiKey> | null;
  }
}
