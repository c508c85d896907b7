import { Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { InboundModule } from '../inbound/inbound.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { DemoSeedService } from './demo-seed.service.js';

@Module({ imports: [AuthModule, ApiKeysModule, InboundModule, SettingsModule], providers: [DemoSeedService], exports: [DemoSeedService] })
export class SeedModule {}
