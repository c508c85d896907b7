import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { API_KEY_SCOPES } from '../auth/auth-principal.js';
import { AuthService } from '../auth/auth.service.js';
import { AppConfig } from '../config/app-config.js';
import { DatabaseTarget } from '../database/database-target.js';

export const DEMO_ADMIN_EMAIL = 'admin@demo.parley.local';

export interface DemoCredentials {
  email: string;
  password: string;
  accessToken: string;
  apiKey: string;
}

/**
 * First run on the embedded engine (always a fresh, empty database): a demo company, its admin and
 * an API key with every scope, so a newcomer can call both interfaces straight away.
 */
@Injectable()
export class DemoSeedService {
  constructor(
    private readonly config: AppConfig,
    private readonly target: DatabaseTarget,
    private readonly auth: AuthService,
    private readonly apiKeys: ApiKeysService,
  ) {}

  get enabled(): boolean {
    return this.target.isEmbedded && this.config.demoSeed;
  }

  async seed(): Promise<DemoCredentials | null> {
    if (!this.enabled) return null;
    const password = randomBytes(12).toString('base64url');
    const registered = await this.auth.onboard({
      companyName: 'Demo Company',
      name: 'Demo Admin',
      email: DEMO_ADMIN_EMAIL,
      password,
    });
    const apiKey = await this.apiKeys.issue(registered.company.id, { name: 'Demo key', scopes: [...API_KEY_SCOPES] }, registered.agent.id);
    return { email: DEMO_ADMIN_EMAIL, password, accessToken: registered.accessToken, apiKey: apiKey.key };
  }
}
