import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, mongo, QueryFilter } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../../database/tenancy/tenant-repository.js';
import { IdempotencyRecord } from './idempotency-record.schema.js';

/** What a request claims a key with. */
export interface KeyClaim {
  key: string;
  route: string;
  path: string;
  claimId: string;
  leaseExpiresAt: Date;
  expiresAt: Date;
}

/** What a finished request keeps. */
export interface KeptAnswer {
  fingerprint: string;
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  expiresAt: Date;
}

@Injectable()
export class IdempotencyRepository extends TenantRepository<IdempotencyRecord> {
  constructor(@InjectModel(IdempotencyRecord.name) model: Model<IdempotencyRecord>) {
    super(model);
  }

  /**
   * Claims the key in one write: inserts it, or takes over a record that is past `expiresAt` (the TTL
   * monitor runs only now and then), a `running` claim whose lease lapsed (its process died), or the
   * record whose claim is `replacing`. False when another record holds the key.
   */
  async claim(companyId: CompanyId, claim: KeyClaim, now: Date, replacing?: string): Promise<boolean> {
    const takeable: QueryFilter<IdempotencyRecord>[] = [
      { expiresAt: { $lte: now } },
      { state: 'running', leaseExpiresAt: { $lte: now } },
    ];
    if (replacing) takeable.push({ claimId: replacing });
    const blank = { fingerprint: null, status: null, headers: null, body: null };
    return this.claimOne(companyId, { key: claim.key, $or: takeable }, { $set: { ...claim, ...blank, state: 'running' } });
  }

  /** The record of a key, its body as a Buffer (a lean read gives BSON's Binary). */
  async findByKey(companyId: CompanyId, key: string): Promise<Stored<IdempotencyRecord> | null> {
    const record = await this.findOne(companyId, { key });
    const body = record?.body as Buffer | mongo.Binary | null | undefined;
    if (!record || !body || Buffer.isBuffer(body)) return record;
    const bytes = body.value();
    return { ...record, body: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  }

  /** Stores the answer, unless the claim was taken over meanwhile (then the taker's answer counts). */
  async complete(companyId: CompanyId, key: string, claimId: string, answer: KeptAnswer): Promise<void> {
    await this.model
      .updateOne(this.scope(companyId, { key, claimId, state: 'running' }), { $set: { ...answer, state: 'done' } })
      .exec();
  }

  /** Gives the key up, so that a retry runs again. */
  async release(companyId: CompanyId, key: string, claimId: string): Promise<void> {
    await this.deleteOne(companyId, { key, claimId });
  }
}
