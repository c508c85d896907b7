import { RequestValidationException } from '../common/errors/request-validation.exception.js';

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
