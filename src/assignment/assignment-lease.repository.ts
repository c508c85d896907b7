import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository, type CompanyId } from '../database/tenancy/tenant-repository.js';
import { AssignmentLease } from './assignment-lease.schema.js';

@Injectable()
export class AssignmentLeaseRepository extends TenantRepository<AssignmentLease> {
  constructor(@InjectModel(AssignmentLease.name) model: Model<AssignmentLease>) {
    super(model);
  }

  /** Takes the company's lease if it is free or lapsed; false while someone else holds it. */
  async claim(companyId: CompanyId, holder: string, ttlMs: number): Promise<boolean> {
    const now = new Date();
    return this.claimOne(
      companyId,
      { expiresAt: { $lte: now } },
      { $set: { holder, expiresAt: new Date(now.getTime() + ttlMs) } },
    );
  }

  async release(companyId: CompanyId, holder: string): Promise<void> {
    await this.deleteOne(companyId, { holder });
  }
}
