import { randomBytes } from 'node:crypto';
import type { AuthPrincipal } from '../auth/auth-principal.js';

export const AUDIT_ACTOR_TYPES = ['agent', 'api_key', 'system'] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

/** Who made a change, and where the request came from: what a controller hands its service (see AuditOriginOf). */
export interface AuditOrigin {
  actor: { type: AuditActorType; id: string | null };
  requestId: string | null;
  ip: string | null;
}

/** What the system does on its own (timers, background jobs): no request. */
export const SYSTEM_ORIGIN: AuditOrigin = { actor: { type: 'system', id: null }, requestId: null, ip: null };

/** A request without a principal (a public route such as login) is the system's until the service knows better. */
export function originOf(principal: AuthPrincipal | undefined, requestId: string | null, ip: string | null): AuditOrigin {
  const actor = !principal
    ? { type: 'system' as const, id: null }
    : principal.kind === 'agent'
      ? { type: 'agent' as const, id: principal.agentId }
      : { type: 'api_key' as const, id: principal.apiKeyId };
  return { actor, requestId, ip };
}

/** `{ field: [before, after] }`; values are JSON (dates as ISO strings, ids as hex). */
export type AuditChanges = Record<string, [unknown, unknown]>;

/** What every secret and password shows in an entry, before and after alike. */
export const CHANGED = '[changed]';

/**
 * An entry as written with its change (a document's `pendingAudit`), before the trail gives it a sequence, its
 * actor's name and its place in the hash chain.
 */
export interface StagedAuditEntry {
  id: string;
  at: Date;
  actor: { type: AuditActorType; id: string | null };
  action: string;
  target: { type: string; id: string };
  changes: AuditChanges | null;
  requestId: string | null;
  ip: string | null;
}

export function newAuditEntryId(): string {
  return `aud_${randomBytes(12).toString('base64url')}`;
}

export function stageAudit(
  origin: AuditOrigin,
  action: string,
  target: { type: string; id: string },
  changes: AuditChanges | null = null,
  at: Date = new Date(),
): StagedAuditEntry {
  return {
    id: newAuditEntryId(),
    at,
    actor: { ...origin.actor },
    action,
    target: { type: target.type, id: String(target.id) },
    changes: changes && Object.keys(changes).length > 0 ? (jsonOf(changes) as AuditChanges) : null,
    requestId: origin.requestId,
    ip: origin.ip,
  };
}

export interface DiffOptions {
  /** Shown as "[changed]" when they change, never their values (passwords, secrets). */
  secret?: readonly string[];
  /** Named with nulls instead of values when they change: personal data (a view's filter may hold an e-mail). */
  namesOnly?: readonly string[];
}

/**
 * The fields of `fields` whose value differs between `before` and `after` (null: the record did not exist, or
 * no longer does), as `{ field: [before, after] }`.
 */
export function diff(before: object | null, after: object | null, fields: readonly string[], options: DiffOptions = {}): AuditChanges {
  const changes: AuditChanges = {};
  for (const field of fields) {
    const was = before ? ((before as Record<string, unknown>)[field] ?? null) : null;
    const is = after ? ((after as Record<string, unknown>)[field] ?? null) : null;
    if (JSON.stringify(jsonOf(was)) === JSON.stringify(jsonOf(is))) continue;
    if (options.secret?.includes(field)) changes[field] = [CHANGED, CHANGED];
    else if (options.namesOnly?.includes(field)) changes[field] = [null, null];
    else changes[field] = [jsonOf(was), jsonOf(is)];
  }
  return changes;
}

/**
 * The changes of writing `fields` over `current` (null: a record created as `fields`): each field it writes whose
 * value differs (see diff).
 */
export function changesMade(current: object | null, fields: object, options: DiffOptions = {}): AuditChanges {
  return diff(current, fields, Object.keys(fields), options);
}

/** Plain JSON (dates as ISO strings, ObjectIds as hex), so an entry hashes the same after a round trip. */
function jsonOf(value: unknown): unknown {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as unknown);
}
