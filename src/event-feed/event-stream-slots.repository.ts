import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository, type CompanyId } from '../database/tenancy/tenant-repository.js';
import { EventStreamSlot } from './event-stream-slot.schema.js';

@Injectable()
export class EventStreamSlotsRepository extends TenantRepository<EventStreamSlot> {
  constructor(@InjectModel(EventStreamSlot.name) model: Model<EventStreamSlot>) {
    super(model);
  }

  /**
   * Takes one of the company's `cap` stream slots: inserts it, then counts the live ones, and takes it back when
   * that is over the cap. Of two concurrent takers for the last slot, the one counting last sees both, so the cap
   * is never exceeded (both may be refused, and retry).
   */
  async take(companyId: CompanyId, id: string, owner: string, leaseMs: number, cap: number): Promise<boolean> {
    const now = Date.now();
    await this.create(companyId, { _id: id, owner, leaseUntil: new Date(now + leaseMs) });
    const open = await this.count(companyId, { leaseUntil: { $gt: new Date(now) } });
    if (open <= cap) return true;
    await this.release(companyId, [id]);
    return false;
  }

  async renew(companyId: CompanyId, ids: string[], leaseMs: number): Promise<void> {
    await this.updateMany(companyId, { _id: { $in: ids } }, { $set: { leaseUntil: new Date(Date.now() + leaseMs) } });
  }

  async release(companyId: CompanyId, ids: string[]): Promise<void> {
    await this.deleteMany(companyId, { _id: { $in: ids } });
  }
}
