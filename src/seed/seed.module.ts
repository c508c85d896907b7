import { Module } from '@nestjs/common';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { DemoSeedService } from './demo-seed.service.js';

@Module({ imports: [AuthModule, ApiKeysModule], providers: [DemoSeedService], exports: [DemoSeedService] })
export class SeedModule {}
