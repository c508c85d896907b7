import { Injectable } from '@nestjs/common';
import { BoundedMap } from '../common/bounded-map.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { MAX_FLOWS_PER_COMPANY, type Flow } from './flow.schema.js';
import { FlowsRepository } from './flows.repository.js';

/** Companies whose active inbound flows are kept in memory. */
const MAX_COMPANIES = 1_000;

/**
 * A company's active inbound-message flows, read whole only when they changed: each message first reads their ids
 * and versions (`updatedAt`), a few bytes each, and reuses the copy it kept of the same versions. A company may have
 * 100 flows of 50 keywords; reading them all for every message cost its consumer, and the database, more than
 * matching them does.
 */
@Injectable()
export class InboundFlows {
  private readonly kept = new BoundedMap<string, { signature: string; flows: Stored<Flow>[] }>(MAX_COMPANIES);

  constructor(private readonly flows: FlowsRepository) {}

  async of(companyId: string): Promise<Stored<Flow>[]> {
    const versions = await this.flows.inboundTriggeredVersions(companyId, MAX_FLOWS_PER_COMPANY);
    if (versions.length === 0) return [];
    const signature = versions.map((flow) => `${flow._id.toHexString()}@${flow.updatedAt.getTime()}`).join(',');
    const kept = this.kept.get(companyId);
    if (kept?.signature === signature) return kept.flows;
    const flows = await this.flows.findInboundTriggered(companyId, MAX_FLOWS_PER_COMPANY);
    const read = flows.map((flow) => `${flow._id.toHexString()}@${flow.updatedAt.getTime()}`).join(',');
    // Changed again between the two reads: use what was read, keep nothing.
    if (read === signature) this.kept.set(companyId, { signature, flows });
    return flows;
  }
}
