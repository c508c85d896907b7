import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { API_KEY_SCOPES, type ApiKeyScope } from '../../auth/auth-principal.js';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { API_KEY_REVOCATION_REASONS, type ApiKey, type ApiKeyRevocationReason } from '../api-key.schema.js';

export class ApiKeyView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: 'WhatsApp connector' }) name: string;
  @ApiProperty({ enum: API_KEY_SCOPES, isArray: true }) scopes: ApiKeyScope[];
  @ApiProperty({ example: 'pk_Xk3v', description: 'The first characters of the key' }) keyPrefix: string;
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60701', nullable: true, type: String, description: 'The admin who created it' })
  createdBy: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'When it stops working; null: never' })
  expiresAt: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String, description: 'Its last use, to the minute' })
  lastUsedAt: string | null;
  @ApiProperty({ format: 'date-time', nullable: true, type: String }) revokedAt: string | null;
  @ApiProperty({
    enum: API_KEY_REVOCATION_REASONS,
    nullable: true,
    description: '`revoked` by a caller, or `creator_deactivated` when the admin who created it was deactivated',
  })
  revokedReason: ApiKeyRevocationReason | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

  static from(apiKey: Stored<ApiKey>): ApiKeyView {
    return {
      id: apiKey._id.toHexString(),
      name: apiKey.name,
      scopes: apiKey.scopes,
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
  @ApiPropertyOptional({ example: 'pk_Xk3v…', description: 'The key itself: shown only in this response, store it now' })
  key: string;
}

