import { Global, Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AppConfig } from './app-config.js';
import { keepDevelopmentSecret } from './development-secret.js';
import { loadAppConfig } from './environment.js';

/**
 * Validates the environment once, when the application module is built, so a bad value stops
 * start-up before anything connects. `AppConfig` is the typed view; `ConfigService` serves the same
 * values under the key `app` for modules that expect @nestjs/config.
 */
@Global()
@Module({})
export class AppConfigModule {
  static forRoot(env: Record<string, string | undefined> = process.env): DynamicModule {
    const config = keepDevelopmentSecret(loadAppConfig(env));
    return {
      module: AppConfigModule,
      imports: [ConfigModule.forRoot({ ignoreEnvFile: true, ignoreEnvVars: true, load: [() => ({ app: config })] })],
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
