import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter } from 'mongoose';
import { escapeRegExp } from '../common/escape-regexp.js';
import type { Page } from '../common/pagination/page.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { CannedResponse, SHORT_CODE_PATTERN } from './canned-response.schema.js';

const CURSOR_VERSION = 'k1.';

/** A page's cursor: the last shortCode shown (unique in the company), opaque to callers. */
function encodeShortCodeCursor(shortCode: string): string {
  return Buffer.from(CURSOR_VERSION + shortCode).toString('base64url');
}

function decodeShortCodeCursor(cursor: string): string {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  const shortCode = decoded.startsWith(CURSOR_VERSION) ? decoded.slice(CURSOR_VERSION.length) : '';
  if (!SHORT_CODE_PATTERN.test(shortCode)) throw new BadRequestException('Invalid pagination cursor');
  return shortCode;
}

@Injectable()
export class CannedResponsesRepository extends TenantRepository<CannedResponse> {
  constructor(@InjectModel(CannedResponse.name) model: Model<CannedResponse>) {
    super(model);
  }

  /**
   * A page in shortCode order, after the cursor's shortCode, on the { companyId, shortCode } index. `search` keeps
   * those whose shortCode starts with it, or whose title or content contain it: a filter on that walk, which the
   * per-company cap bounds (MAX_CANNED_RESPONSES_PER_COMPANY).
   */
  async pageByShortCode(companyId: CompanyId, options: { search?: string; cursor?: string; limit: number }): Promise<Page<Stored<CannedResponse>>> {
    const filter: QueryFilter<CannedResponse> = {};
    if (options.cursor) filter.shortCode = { $gt: decodeShortCodeCursor(options.cursor) };
    if (options.search) {
      const anywhere = new RegExp(escapeRegExp(options.search), 'i');
      filter.$or = [
        { shortCode: { $regex: `^${escapeRegExp(options.search.toLowerCase())}` } },
        { title: anywhere },
        { content: anywhere },
      ];
    }
    const rows = await this.find(companyId, filter, { sort: { shortCode: 1 }, limit: options.limit + 1 });
    const data = rows.slice(0, options.limit);
    const last = data.at(-1);
    return { data, nextCursor: rows.length > options.limit && last ? encodeShortCodeCursor(last.shortCode) : null };
  }
}
