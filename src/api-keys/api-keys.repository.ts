import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { TenantRepository, type Stored } from '../database/tenancy/tenant-repository.js';
import { ApiKey } from './api-key.schema.js';

@Injectable()
export class ApiKeysRepository extends TenantRepository<ApiKey> {
  constructor(@InjectModel(ApiKey.name) model: Model<ApiKey>) {
    super(model);
  }

  /** The key's hash is what identifies the company, so this lookup is necessarily cross-tenant. */
  async findActiveByHash(keyHash: string): Promise<Stored<ApiKey> | null> {
    return (await this.model
      .findOne({ keyHash, revokedAt: null }, { companyId: 1, scopes: 1 })
      .setOptions({ [CROSS_TENANT]: true })
      .lean()
      .exec()) as Stored<ApiKey> | null;
  }
}
