import { Injectable } from '@nestjs/common';
import { BoundedMap } from '../common/bounded-map.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Flow } from './flow.schema.js';
import { compileKeywords, KeywordIndex, type CompiledKeyword, type ScannedText } from './keyword-match.js';

/** Compiled keyword sets kept in memory; beyond, the least recently used go. */
const MAX_COMPILED = 10_000;
/** Companies whose keyword index is kept in memory. */
const MAX_INDEXES = 1_000;

/**
 * Matches inbound messages against the keywords of a company's active flows, all at once (KeywordIndex): each
 * saved version of a flow's keywords is compiled once (keyed by flow id and `updatedAt`), and the company's index
 * is built once per set of flow versions, rather than once per message.
 */
@Injectable()
export class FlowTriggerMatcher {
  private readonly compiled = new BoundedMap<string, { version: number; keywords: CompiledKeyword[] }>(MAX_COMPILED);
  private readonly indexes = new BoundedMap<string, { signature: string; index: KeywordIndex }>(MAX_INDEXES);

  /** The flows of `flows` (a company's active inbound flows) that the message triggers. */
  triggered(companyId: string, flows: readonly Stored<Flow>[], scanned: ScannedText | null): Set<Stored<Flow>> {
    const matching = this.indexOf(companyId, flows).matching(scanned);
    return new Set(flows.filter((_, position) => matching.has(position)));
  }

  private indexOf(companyId: string, flows: readonly Stored<Flow>[]): KeywordIndex {
    const signature = flows.map((flow) => `${flow._id.toHexString()}@${flow.updatedAt.getTime()}`).join(',');
    const cached = this.indexes.get(companyId);
    this.indexes.delete(companyId);
    const entry = cached?.signature === signature ? cached : { signature, index: new KeywordIndex(flows.map((flow) => this.keywordsOf(flow))) };
    this.indexes.set(companyId, entry);
    return entry.index;
  }

  private keywordsOf(flow: Stored<Flow>): CompiledKeyword[] {
    const key = flow._id.toHexString();
    const version = flow.updatedAt.getTime();
    const cached = this.compiled.get(key);
    this.compiled.delete(key);
    const entry = cached?.version === version ? cached : { version, keywords: compileKeywords(flow.trigger.keywords) };
    this.compiled.set(key, entry);
    return entry.keywords;
  }
}
