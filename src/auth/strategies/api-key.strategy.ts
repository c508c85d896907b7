import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import { ApiKeysService } from '../../api-keys/api-keys.service.js';
import type { ApiKeyPrincipal } from '../auth-principal.js';

export const API_KEY_STRATEGY = 'api-key';
export const API_KEY_HEADER = 'x-api-key';

/**
 * Looks the presented key up by its hash; an unknown, revoked or expired key authenticates nobody.
 * A Passport strategy (`api-key`); the authentication guard calls `principalOf`, the same header
 * read and `validate` without Passport's per-request middleware and strategy object.
 */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(HeaderAPIKeyStrategy, API_KEY_STRATEGY) {
  constructor(@Inject(ApiKeysService) private readonly apiKeys: ApiKeysService) {
    super({ header: API_KEY_HEADER, prefix: '' }, false);
  }

  /** The API key of the request's `x-api-key`; 401 (UnauthorizedException) when it is missing or authenticates nobody. */
  async principalOf(req: Request): Promise<ApiKeyPrincipal> {
    const presented = req.headers[API_KEY_HEADER];
    if (!presented) throw new UnauthorizedException('Missing API key (x-api-key header)');
    const principal = await this.validate(String(presented));
    if (!principal) throw new UnauthorizedException('Invalid or revoked API key');
    return principal;
  }

  async validate(presentedKey: string): Promise<ApiKeyPrincipal | false> {
    return (await this.apiKeys.authenticate(presentedKey)) ?? false;
  }
}
