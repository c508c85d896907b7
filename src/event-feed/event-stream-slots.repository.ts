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
   * Takes one of the company's `caps.company` stream slots, and one of its principal's `caps.principal`: inserts it,
   * then counts the live ones, and takes it back when either count is over its cap. Of two concurrent takers for
   * the last slot, the one counting last sees both, so no cap is ever exceeded (both may be refused, and retry).
   * Answers the cap that refused it, or null when taken.
   */
  async take(
    companyId: CompanyId,
    slot: { id: string; owner: string; principal: string },
    leaseMs: number,
    caps: { company: number; principal: number },
  ): Promise<'company' | 'principal' | null> {
    const now = Date.now();
    await this.create(companyId, { _id: slot.id, owner: slot.owner, principal: slot.principal, leaseUntil: new Date(now + leaseMs) });
    const live = { leaseUntil: { $gt: new Date(now) } };
    const [company, principal] = await Promise.all([this.count(companyId, live), this.count(companyId, { principal: slot.principal, ...live })]);
    const refused = principal > caps.principal ? 'principal' : company > caps.company ? 'company' : null;
    if (refused) await this.release(companyId, [slot.id]);
    return refused;
  }

  async renew(companyId: CompanyId, ids: string[], leaseMs: number): Promise<void> {
    await this.updateMany(companyId, { _id: { $in: ids } }, { $set: { leaseUntil: new Date(Date.now() + leaseMs) } });
  }

  async release(companyId: CompanyId, ids: string[]): Promise<void> {
    await this.deleteMany(companyId, { _id: { $in: ids } });
  }
}
