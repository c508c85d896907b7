import { ConflictException, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { API_KEY_SCOPES } from '../auth/auth-principal.js';
import { AuthService } from '../auth/auth.service.js';
import { AppConfig } from '../config/app-config.js';
import { DatabaseTarget } from '../database/database-target.js';
import { InboundMessagesService } from '../inbound/inbound-messages.service.js';
import { SettingsService } from '../settings/settings.service.js';
import { SYSTEM_ORIGIN } from '../audit/audit-entry.js';

export const DEMO_ADMIN_EMAIL = 'admin@demo.parley.local';

export interface DemoCredentials {
  email: string;
  accessToken: string;
  /** When the access token stops working (JWT_EXPIRES_IN after the start). */
  accessTokenExpiresAt: Date;
  /** The admin's password and the API key exist in clear only when they are created; null on a later start. */
  password: string | null;
  apiKey: string | null;
  /** True when the demo company was created by an earlier start on the same data directory. */
  existing: boolean;
  /** Where the embedded engine keeps the data; undefined when in memory. */
  dataDir?: string;
}

/** The demo company's welcome (a new company has none: it sends only what it chose). */
const DEMO_WELCOME = 'Hi! Thanks for writing to Demo Company: an agent will be with you shortly.';

/** What two customers wrote in, through the inbound path a channel connector uses. */
const DEMO_INBOUND = [
  { from: { name: 'Grace Hopper', email: 'grace@example.com', phone: '+14155552671' }, text: 'Hi! Where is my order #1042?' },
  { from: { name: 'Alan Turing', email: 'alan@example.com' }, text: 'Do you have a plan for teams?', channel: 'web-chat' },
];

/**
 * On the embedded engine: a demo company (with a welcome message), its admin, an API key with every scope and two
 * customers' conversations (which the bot welcomes), so a newcomer can call both interfaces and see records straight
 * away. On a data directory kept from an earlier start the company exists already: nothing is created again, and the
 * admin gets a fresh token (the password and the key are stored only as hashes).
 */
@Injectable()
export class DemoSeedService {
  constructor(
    private readonly config: AppConfig,
    private readonly target: DatabaseTarget,
    private readonly auth: AuthService,
    private readonly apiKeys: ApiKeysService,
    private readonly inbound: InboundMessagesService,
    private readonly settings: SettingsService,
  ) {}

  get enabled(): boolean {
    return this.target.isEmbedded && this.config.demoSeed;
  }

  async seed(): Promise<DemoCredentials | null> {
    if (!this.enabled) return null;
    const dataDir = this.target.dataDir;
    const expiry = (expiresIn: number) => new Date(Date.now() + expiresIn * 1000);
    const existing = await this.auth.issueWithoutPassword(DEMO_ADMIN_EMAIL);
    if (existing) {
      const accessTokenExpiresAt = expiry(existing.expiresIn);
      return { email: DEMO_ADMIN_EMAIL, accessToken: existing.accessToken, accessTokenExpiresAt, password: null, apiKey: null, existing: true, dataDir };
    }
    const password = randomBytes(12).toString('base64url');
    let registered;
    try {
      registered = await this.auth.onboard({ companyName: 'Demo Company', name: 'Demo Admin', email: DEMO_ADMIN_EMAIL, password });
    } catch (error) {
      // The demo admin exists but was deactivated: its company keeps it that way.
      if (error instanceof ConflictException) return null;
      throw error;
    }
    const apiKey = await this.apiKeys.issue(registered.company.id, { name: 'Demo key', scopes: [...API_KEY_SCOPES] }, registered.agent.id);
    await this.settings.update(registered.company.id, { welcomeMessage: DEMO_WELCOME }, SYSTEM_ORIGIN);
    for (const message of DEMO_INBOUND) await this.inbound.receive(registered.company.id, message);
    return {
      email: DEMO_ADMIN_EMAIL,
      accessToken: registered.accessToken,
      accessTokenExpiresAt: expiry(registered.expiresIn),
      password,
      apiKey: apiKey.key,
      existing: false,
      dataDir,
    };
  }
}
