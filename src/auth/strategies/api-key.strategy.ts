import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { HeaderAPIKeyStrategy } from 'passport-headerapikey';
import { ApiKeysService } from '../../api-keys/api-keys.service.js';
import type { ApiKeyPrincipal } from '../auth-principal.js';

export const API_KEY_STRATEGY = 'api-key';
export const API_KEY_HEADER = 'x-api-key';

/** Looks the presented key up by its hash; an unknown or revoked key authenticates nobody. */
@Injectable()
export class ApiKeyStrategy extends PassportStrategy(HeaderAPIKeyStrategy, API_KEY_STRATEGY) {
  constructor(@Inject(ApiKeysService) private readonly apiKeys: ApiKeysService) {
    super({ header: API_KEY_HEADER, prefix: '' }, false);
  }

  async validate(presentedKey: string): Promise<ApiKeyPrincipal | false> {
    return (await this.apiKeys.authenticate(presentedKey)) ?? false;
  }
}
