import type { ApiKeyScope } from '../auth/auth-principal.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { ApiKey } from './api-key.schema.js';

export class ApiKeyView {
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example "WhatsApp connector" */
  name: string;
  scopes: ApiKeyScope[];
  /**
   * The first characters of the key
   * @example pk_Xk3v
   */
  keyPrefix: string;
  revokedAt: string | null;
  createdAt: string;
  updatedAt: string;

  static from(apiKey: Stored<ApiKey>): ApiKeyView {
    return {
      id: apiKey._id.toHexString(),
      name: apiKey.name,
      scopes: apiKey.scopes,
      keyPrefix: apiKey.keyPrefix,
      revokedAt: apiKey.revokedAt?.toISOString() ?? null,
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
