import { Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { API_KEY_SCOPES } from '../auth/auth-principal.js';
import { AuthService } from '../auth/auth.service.js';
import { AppConfig } from '../config/app-config.js';
import { DatabaseTarget } from '../database/database-target.js';
import { InboundMessagesService } from '../inbound/inbound-messages.service.js';

export const DEMO_ADMIN_EMAIL = 'admin@demo.parley.local';

export interface DemoCredentials {
  email: string;
  password: string;
  accessToken: string;
  /** When the access token stops working (JWT_EXPIRES_IN after the start). */
  accessTokenExpiresAt: Date;
  apiKey: string;
}

/** What two customers wrote in, through the inbound path a channel connector uses. */
const DEMO_INBOUND = [
  { from: { name: 'Grace Hopper', email: 'grace@example.com', phone: '+14155552671' }, text: 'Hi! Where is my order #1042?' },
  { from: { name: 'Alan Turing', email: 'alan@example.com' }, text: 'Do you have a plan for teams?', channel: 'web-chat' },
];

/**
 * First run on the embedded engine (always a fresh, empty database): a demo company, its admin, an API key with
 * every scope and two customers' conversations, so a newcomer can call both interfaces and see records straight away.
 */
@Injectable()
export class DemoSeedService {
  constructor(
    private readonly config: AppConfig,
    private readonly target: DatabaseTarget,
    private readonly auth: AuthService,
    private readonly apiKeys: ApiKeysService,
    private readonly inbound: InboundMessagesService,
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
    for (const message of DEMO_INBOUND) await this.inbound.receive(registered.company.id, message);
    return {
      email: DEMO_ADMIN_EMAIL,
      password,
      accessToken: registered.accessToken,
      accessTokenExpiresAt: new Date(Date.now() + registered.expiresIn * 1000),
      apiKey: apiKey.key,
    };
  }
}
