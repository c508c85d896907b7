import { Injectable } from '@nestjs/common';
import { Types, type QueryFilter } from 'mongoose';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import type { Contact } from './contact.schema.js';
import { ContactView } from './contact.view.js';
import { ContactsRepository, LIVE_CONTACT } from './contacts.repository.js';

export const CONTACT_SORTS = ['created', 'name'] as const;
export type ContactSort = (typeof CONTACT_SORTS)[number];

function encodeNameCursor(name: string | null, id: Types.ObjectId): string {
  return Buffer.from(JSON.stringify(['n1', name, id.toHexString()])).toString('base64url');
}

function decodeNameCursor(cursor: string): { name: string | null; id: Types.ObjectId } {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    decoded = null;
  }
  const [version, name, id] = Array.isArray(decoded) ? decoded : [];
  if (version !== 'n1' || !(name === null || typeof name === 'string') || typeof id !== 'string' || !/^[0-9a-f]{24}$/.test(id)) {
    throw new RequestValidationException([{ field: 'cursor', message: 'cursor is not a cursor of this search: pass back a nextCursor unchanged' }]);
  }
  return { name, id: new Types.ObjectId(id) };
}

/**
 * The contacts a compiled filter (the filter language, src/filters) matches: their ids for a `contact.*` condition on
 * conversations, a page for search and saved views, a capped count for views' counts. Merged sources (tombstones)
 * are left out, as from the list.
 */
@Injectable()
export class ContactQueries {
  constructor(private readonly contacts: ContactsRepository) {}

  /** The ids of the contacts `query` matches (stored types), at most `max` + 1: the caller learns there are more. */
  async idsMatching(companyId: CompanyId, query: QueryFilter<Contact>, max: number): Promise<Types.ObjectId[]> {
    const rows = await this.contacts.findPlain(
      companyId,
      { ...query, ...LIVE_CONTACT },
      { projection: { _id: 1 }, limit: max + 1, sort: { _id: 1 } },
    );
    return rows.map((row) => row._id);
  }

  /**
   * A page of the contacts `query` matches (stored types): `created` newest first, or `name` A to Z (contacts without
   * a name first, as MongoDB orders null), continuing strictly after the cursor's contact.
   */
  async searchPage(
    companyId: CompanyId,
    filter: QueryFilter<Contact>,
    sort: ContactSort,
    limit: number,
    cursor?: string,
  ): Promise<Page<ContactView>> {
    const query: QueryFilter<Contact> = { ...filter, ...LIVE_CONTACT };
    if (sort === 'created') return mapPage(await this.contacts.page(companyId, query, { limit, cursor, plain: true }), ContactView.from);
    const after = cursor === undefined ? null : decodeNameCursor(cursor);
    const window: QueryFilter<Contact> = after
      ? {
          $and: [
            query,
            after.name === null
              ? { $or: [{ name: null, _id: { $gt: after.id } }, { name: { $type: 'string' } }] }
              : { $or: [{ name: after.name, _id: { $gt: after.id } }, { name: { $gt: after.name } }] },
          ],
        }
      : query;
    const rows = await this.contacts.findPlain(companyId, window, { sort: { name: 1, _id: 1 }, limit: limit + 1 });
    const data = rows.slice(0, limit);
    const last = data.at(-1);
    return { data: data.map(ContactView.from), nextCursor: rows.length > limit && last ? encodeNameCursor(last.name ?? null, last._id) : null };
  }

  /** How many contacts `query` matches (stored types), counting no further than `cap` (saved views' counts). */
  async countUpTo(companyId: CompanyId, query: QueryFilter<Contact>, cap: number): Promise<number> {
    return this.contacts.countPlain(companyId, { ...query, ...LIVE_CONTACT }, cap);
  }
}
