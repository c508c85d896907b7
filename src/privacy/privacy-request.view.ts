import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import {
  PRIVACY_REQUEST_STATUSES,
  PRIVACY_REQUEST_TYPES,
  type PrivacyRequest,
  type PrivacyRequestStatus,
  type PrivacyRequestType,
} from './privacy-request.schema.js';

export class PrivacyRequestView {
  /** @example "6650f0c2a1b2c3d4e5f60790" */
  id: string;

  @ApiProperty({ enum: PRIVACY_REQUEST_TYPES })
  type: PrivacyRequestType;

  contactId: string;

  @ApiProperty({ enum: PRIVACY_REQUEST_STATUSES })
  status: PrivacyRequestStatus;

  reason: string | null;

  /** Export: whether private notes are included */
  includeNotes: boolean;

  /** When it is (was) carried out */
  dueAt: string;

  /** Why it failed, e.g. a legal hold */
  failureReason: string | null;

  /** A completed export, REST answers only: the ZIP without credentials until `downloadUrlExpiresAt` (7 days) */
  downloadUrl?: string;

  downloadUrlExpiresAt?: string;

  createdAt: string;

  completedAt: string | null;

  static from(request: Stored<PrivacyRequest>, link?: { url: string; expiresAt: Date } | null): PrivacyRequestView {
    return {
      id: request._id.toHexString(),
      type: request.type,
      contactId: request.contactId.toHexString(),
      status: request.status,
      reason: request.reason ?? null,
      includeNotes: request.includeNotes ?? false,
      dueAt: request.dueAt.toISOString(),
      failureReason: request.failureReason ?? null,
      ...(link ? { downloadUrl: link.url, downloadUrlExpiresAt: link.expiresAt.toISOString() } : {}),
      createdAt: request.createdAt.toISOString(),
      completedAt: request.completedAt?.toISOString() ?? null,
    };
  }
}
