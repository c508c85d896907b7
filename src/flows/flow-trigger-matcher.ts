import { Injectable } from '@nestjs/common';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Flow } from './flow.schema.js';
import { compileKeywords, triggers, type CompiledKeyword, type ScannedText } from './keyword-match.js';
import { BoundedMap } from '../common/bounded-map.js';

/** Compiled keyword sets kept in memory; beyond, the least recently used go. */
const MAX_COMPILED = 10_000;

/**
 * Matches inbound messages against flows' keywords, compiling each saved version of a flow's keywords once
 * (keyed by flow id and `updatedAt`) rather than once per message.
 */
@Injectable()
export class FlowTriggerMatcher {
  private readonly compiled = new BoundedMap<string, { version: number; keywords: CompiledKeyword[] }>(MAX_COMPILED);

  triggers(flow: Stored<Flow>, scanned: ScannedText | null): boolean {
    return triggers(scanned, this.keywordsOf(flow));
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
