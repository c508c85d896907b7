import { ApiProperty } from '@nestjs/swagger';
import type { ApiKeyScope } from '../auth/auth-principal.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { API_KEY_REVOCATION_REASONS, type ApiKey, type ApiKeyRevocationReason } from './api-key.schema.js';

export class ApiKeyView {
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example "WhatsApp connector" */
  name: string;
  scopes: ApiKeyScope[];
  /**
   * The channels the key is limited to; null: every channel
   * @example ["whatsapp"]
   */
  channels: string[] | null;
  /**
   * The first characters of the key
   * @example pk_Xk3v
   */
  keyPrefix: string;
  /**
   * The admin who created it
   * @example 6650f0c2a1b2c3d4e5f60701
   */
  createdBy: string | null;
  /** When it stops working; null: never */
  expiresAt: string | null;
  /** Its last use, to the minute */
  lastUsedAt: string | null;
  revokedAt: string | null;
  @ApiProperty({
    enum: API_KEY_REVOCATION_REASONS,
    nullable: true,
    description:
      '`revoked` by a caller, `creator_deactivated` when the admin who created it was deactivated, `creator_demoted` when that admin ' +
      'was given another role',
  })
  revokedReason: ApiKeyRevocationReason | null;
  createdAt: string;
  updatedAt: string;

  static from(apiKey: Stored<ApiKey>): ApiKeyView {
    return {
      id: apiKey._id.toHexString(),
      name: apiKey.name,
      scopes: apiKey.scopes,
      channels: apiKey.channels?.length ? apiKey.channels : null,
      keyPrefix: apiKey.keyPrefix,
      createdBy: apiKey.createdBy?.toHexString() ?? null,
      expiresAt: apiKey.expiresAt?.toISOString() ?? null,
      lastUsedAt: apiKey.lastUsedAt?.toISOString() ?? null,
      revokedAt: apiKey.revokedAt?.toISOString() ?? null,
      revokedReason: apiKey.revokedReason ?? (apiKey.revokedAt ? 'revoked' : null),
      createdAt: apiKey.createdAt.toISOString(),
      updatedAt: apiKey.updatedAt.toISOString(),
    };
  }
}

export class CreatedApiKeyView extends ApiKeyView {
  /**
   * The key itself: shown only in this response, store it now
   * @example pk_Xk3v…
   */
  key: string;
}
