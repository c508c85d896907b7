import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import type { AuditEntryView } from './audit-entry.view.js';
import type { AuditLogEntry } from './audit-log.schema.js';

/**
 * What an entry shows but its hash, which is what the hash covers (not its hash fields, its company or when it
 * expires): the view adds the hash to it, so whatever an entry shows is hashed.
 */
export function hashedContent(entry: Omit<AuditLogEntry, 'hash' | 'previousHash' | 'expireAt'>): Omit<AuditEntryView, 'hash'> {
  return {
    id: entry._id,
    sequence: entry.sequence,
    at: entry.at.toISOString(),
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    changes: entry.changes ?? null,
    requestId: entry.requestId ?? null,
    ip: entry.ip ?? null,
  };
}

/** SHA-256 (hex) of the previous entry's hash followed by the entry's canonical JSON (RFC 8785). */
export function chainHash(previousHash: string, entry: Omit<AuditLogEntry, 'hash' | 'previousHash' | 'expireAt'>): string {
  return createHash('sha256')
    .update(previousHash + canonicalize(hashedContent(entry)))
    .digest('hex');
}
