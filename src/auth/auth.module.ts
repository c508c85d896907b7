import { AgentPresence } from '../agents/agent-presence.js';
import { Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { PassportModule } from '@nestjs/passport';
import { AgentsModule } from '../agents/agents.module.js';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuthFailuresModule } from '../common/rate-limit/rate-limit.module.js';
import { CompaniesModule } from '../companies/companies.module.js';
import { SettingsModule } from '../settings/settings.module.js';
import { AccessTokenService } from './access-token.service.js';
import { AgentAccessCache } from './agent-access.cache.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { CredentialRecheck } from './credential-recheck.js';
import { JwtKey, JwtKeyModule } from './jwt-key.js';
import { PasswordHasher } from './password-hasher.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { JwtStrategy } from './strategies/jwt.strategy.js';

/**
 * Register and login, bearer tokens and API keys. AppModule registers the guards of ./guards
 * globally, in order: authentication, rate limiting, permissions.
 */
@Module({
  imports: [
    PassportModule,
    JwtModule.registerAsync({
      imports: [JwtKeyModule],
      inject: [JwtKey],
      useFactory: (jwtKey: JwtKey) => ({ privateKey: jwtKey.key, signOptions: { algorithm: 'HS256' } }),
    }),
    JwtKeyModule,
    AgentsModule,
    ApiKeysModule,
    AuthFailuresModule,
    CompaniesModule,
    SettingsModule,
  ],
  controllers: [AuthController],
  providers: [
    AccessTokenService,
    AgentAccessCache,
    AuthService,
    PasswordHasher,
    JwtStrategy,
    ApiKeyStrategy,
    CredentialRecheck,
    AgentPresence,
  ],
  exports: [AuthService, JwtStrategy, ApiKeyStrategy, CredentialRecheck],
})
export class AuthModule {}
