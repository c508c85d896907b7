import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter } from 'mongoose';
import type { Page } from '../common/pagination/page.js';
import { toObjectId } from '../database/object-id.js';
import { chainHash } from './audit-chain.js';
import { AuditEntryView, type AuditVerificationView } from './audit-entry.view.js';
import { AuditLogEntry } from './audit-log.schema.js';
import type { AuditLogQueryDto } from './dto/audit-log-query.dto.js';

const CURSOR_VERSION = 'a1.';
const VERIFY_BATCH = 1000;

/** Reads the audit log; nothing here writes it (AuditTrail appends, the TTL monitor removes). */
@Injectable()
export class AuditLogService {
  constructor(@InjectModel(AuditLogEntry.name) private readonly log: Model<AuditLogEntry>) {}

  /** Newest first, by sequence: the cursor is the last sequence of the page (keyset, no skip). */
  async list(companyId: string, query: AuditLogQueryDto): Promise<Page<AuditEntryView>> {
    const filter: QueryFilter<AuditLogEntry> = { companyId: toObjectId(companyId) };
    if (query.actorId) filter['actor.id'] = query.actorId;
    if (query.action) filter.action = query.action;
    if (query.targetType) filter['target.type'] = query.targetType;
    if (query.targetId) filter['target.id'] = query.targetId;
    if (query.after || query.before) {
      filter.at = {};
      if (query.after) filter.at.$gte = query.after;
      if (query.before) filter.at.$lt = query.before;
    }
    if (query.cursor) filter.sequence = { $lt: decodeSequence(query.cursor) };
    const rows = await this.log
      .find(filter)
      .sort({ sequence: -1 })
      .limit(query.limit + 1)
      .lean()
      .exec();
    const data = rows.slice(0, query.limit);
    const more = rows.length > query.limit;
    return {
      data: data.map((row) => AuditEntryView.from(row as AuditLogEntry)),
      nextCursor: more ? Buffer.from(CURSOR_VERSION + String(data[data.length - 1].sequence)).toString('base64url') : null,
    };
  }

  /**
   * Walks the company's chain in order: each entry must hash to its `hash` over its `previousHash`, and that must
   * be the hash of the entry before it (the oldest retained entry is taken as it is: older ones expired).
   */
  async verify(companyId: string): Promise<AuditVerificationView> {
    const company = toObjectId(companyId);
    let checked = 0;
    let after = -1;
    let previous: AuditLogEntry | null = null;
    for (;;) {
      const batch = await this.log
        .find({ companyId: company, sequence: { $gt: after } })
        .sort({ sequence: 1 })
        .limit(VERIFY_BATCH)
        .lean()
        .exec();
      if (batch.length === 0) return { ok: true, checked, firstBadSequence: null };
      for (const entry of batch as AuditLogEntry[]) {
        checked += 1;
        const linked = previous
          ? entry.previousHash === previous.hash && entry.sequence === previous.sequence + 1
          : entry.sequence !== 1 || entry.previousHash === '';
        if (!linked || chainHash(entry.previousHash, entry) !== entry.hash) return { ok: false, checked, firstBadSequence: entry.sequence };
        previous = entry;
        after = entry.sequence;
      }
    }
  }
}

function decodeSequence(cursor: string): number {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  const digits = decoded.startsWith(CURSOR_VERSION) ? decoded.slice(CURSOR_VERSION.length) : '';
  if (!/^\d{1,15}$/.test(digits)) throw new BadRequestException('Invalid pagination cursor');
  return Number(digits);
}
