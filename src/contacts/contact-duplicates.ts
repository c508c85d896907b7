import { Injectable } from '@nestjs/common';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { Contact } from './contact.schema.js';
import { ContactView, type DuplicateCandidatesPage } from './contact.view.js';
import { ContactsRepository } from './contacts.repository.js';
import type { ListDuplicatesQueryDto } from './dto/list-duplicates-query.dto.js';

/** Contacts read at a time when looking for duplicates, and at most this many reads per page. */
const DUPLICATE_SCAN_BATCH = 500;
const DUPLICATE_SCAN_READS = 10;

interface Reachable {
  email?: string | null;
  phone?: string | null;
}

/** Two contacts conflict when they have different values of the same e-mail or phone field: not one person then. */
export function conflicting(a: Reachable, b: Reachable): boolean {
  return (['email', 'phone'] as const).some((field) => a[field] && b[field] && a[field] !== b[field]);
}

/**
 * Contacts of one name split into groups whose members conflict with no other member: each contact joins the first
 * group it conflicts with nobody of. Groups of one are no candidates.
 */
export function candidateGroups<C extends Reachable>(sameName: C[]): C[][] {
  const groups: C[][] = [];
  for (const contact of sameName) {
    const group = groups.find((members) => members.every((member) => !conflicting(member, contact)));
    if (group) group.push(contact);
    else groups.push([contact]);
  }
  return groups.filter((group) => group.length > 1);
}

/** The duplicates' cursor: the name key the previous page ended at. */
export function encodeNameCursor(nameKey: string): string {
  return Buffer.from(nameKey, 'utf8').toString('base64url');
}

export function decodeNameCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!key || encodeNameCursor(key) !== cursor)
    throw new RequestValidationException([{ field: 'cursor', message: 'cursor must be a nextCursor of this list' }]);
  return key;
}

/** Duplicate candidates (contract section 22): contacts whose names are equal and whose e-mails and phones do not conflict. */
@Injectable()
export class ContactDuplicates {
  constructor(private readonly contacts: ContactsRepository) {}

  /**
   * Duplicate candidates, by name key on its index: the contacts of each name, read in name-key order, split into
   * groups without a conflicting e-mail or phone. A page ends after a whole name, so it may hold a few more groups than
   * `limit` when one name gives several; it also ends after DUPLICATE_SCAN_READS reads, to answer in bounded time.
   */
  async page(companyId: CompanyId, query: ListDuplicatesQueryDto): Promise<DuplicateCandidatesPage> {
    let after = query.cursor === undefined ? null : decodeNameCursor(query.cursor);
    const data: DuplicateCandidatesPage['data'] = [];
    for (let read = 0; read < DUPLICATE_SCAN_READS; read += 1) {
      const rows = await this.contacts.findPlain(
        companyId,
        { nameKey: after === null ? { $type: 'string' } : { $gt: after, $type: 'string' } } as never,
        { sort: { nameKey: 1, _id: 1 }, limit: DUPLICATE_SCAN_BATCH },
      );
      const byKey = new Map<string, Stored<Contact>[]>();
      for (const row of rows) byKey.set(row.nameKey!, [...(byKey.get(row.nameKey!) ?? []), row]);
      const keys = [...byKey.keys()];
      // A full batch may have cut its last name short: that name is read whole by the next read.
      const whole = rows.length === DUPLICATE_SCAN_BATCH && keys.length > 1 ? keys.slice(0, -1) : keys;
      for (const key of whole) {
        const sameName =
          rows.length === DUPLICATE_SCAN_BATCH && keys.length === 1
            ? await this.contacts.findPlain(companyId, { nameKey: { $eq: key, $type: 'string' } } as never, {
                sort: { nameKey: 1, _id: 1 },
                limit: DUPLICATE_SCAN_BATCH * 4,
              })
            : byKey.get(key)!;
        for (const group of candidateGroups(sameName))
          data.push({ contacts: group.map((contact) => ContactView.from(contact)), reason: 'same_name' });
        after = key;
        if (data.length >= query.limit) return { data, nextCursor: encodeNameCursor(key) };
      }
      if (rows.length < DUPLICATE_SCAN_BATCH) return { data, nextCursor: null };
    }
    return { data, nextCursor: after === null ? null : encodeNameCursor(after) };
  }
}
