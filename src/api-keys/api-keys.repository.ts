import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { ReadThroughCache } from '../database/caching/read-through-cache.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { TenantRepository, type Stored } from '../database/tenancy/tenant-repository.js';
import { API_KEY_WRITES, ApiKey } from './api-key.schema.js';

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

  private async readActiveByHash(keyHash: string): Promise<Stored<ApiKey> | null> {
    return (await this.model
      .findOne({ keyHash, revokedAt: null }, { companyId: 1, scopes: 1 })
      .setOptions({ [CROSS_TENANT]: true })
      .lean()
      .exec()) as Stored<ApiKey> | null;
  }
}
