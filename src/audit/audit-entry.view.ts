import { ApiProperty } from '@nestjs/swagger';
import { hashedContent } from './audit-chain.js';
import { AUDIT_ACTOR_TYPES, type AuditActorType, type AuditChanges } from './audit-entry.js';
import type { AuditLogEntry } from './audit-log.schema.js';

export class AuditActorView {
  @ApiProperty({ enum: AUDIT_ACTOR_TYPES })
  type: AuditActorType;

  /** null for the system */
  id: string | null;

  /** As it was when the entry was logged */
  name: string | null;
}

export class AuditTargetView {
  /** The kind of record, e.g. `agent`, `webhook`, `settings`, `contact` */
  type: string;

  id: string;
}

export class AuditEntryView {
  /** @example "aud_3q2Zr4mB8Cq0v7n1LkH0aQ" */
  id: string;

  /** Increases by one per company; the hash chain follows it */
  sequence: number;

  at: string;

  actor: AuditActorView;

  /** @example "webhook.secret_rotated" */
  action: string;

  target: AuditTargetView;

  /**
   * `{ field: [before, after] }`; passwords and secrets show "[changed]"; a contact's fields are named with null values
   */
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  changes: AuditChanges | null;

  requestId: string | null;

  ip: string | null;

  /** SHA-256 (hex) of the previous entry's hash followed by this entry's canonical JSON */
  hash: string;

  static from(entry: AuditLogEntry): AuditEntryView {
    return { ...hashedContent(entry), hash: entry.hash };
  }
}

export class AuditVerificationView {
  /** false when an entry does not match its hash or the one before it */
  ok: boolean;

  /** How many entries were checked */
  checked: number;

  /** The first entry that fails; null when ok */
  firstBadSequence: number | null;
}
