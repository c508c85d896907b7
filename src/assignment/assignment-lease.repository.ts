import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { TenantRepository, type CompanyId } from '../database/tenancy/tenant-repository.js';
import { AssignmentLease } from './assignment-lease.schema.js';

@Injectable()
export class AssignmentLeaseRepository extends TenantRepository<AssignmentLease> {
  constructor(@InjectModel(AssignmentLease.name) model: Model<AssignmentLease>) {
    super(model);
  }

  /**
   * Takes the company's lease if it is free or lapsed. A lease held by someone else does not match
   * the filter, so the upsert tries to insert a second one and the unique index refuses it: false.
   */
  async claim(companyId: CompanyId, holder: string, ttlMs: number): Promise<boolean> {
    const now = new Date();
    try {
      await this.model
        .updateOne(
          this.scope(companyId, { expiresAt: { $lte: now } }),
          { $set: { holder, expiresAt: new Date(now.getTime() + ttlMs) } },
          { upsert: true },
        )
        .exec();
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  async release(companyId: CompanyId, holder: string): Promise<void> {
    await this.deleteOne(companyId, { holder });
  }
}
