import type { ServerResponse } from 'node:http';
import { Module, type DynamicModule } from '@nestjs/common';
import { LoggerModule, type Params } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { AppConfig } from '../../config/app-config.js';
import { requestLoggerOptions, type LoggedRequest } from './request-logger.options.js';

export interface LoggingModuleOptions {
  /** Where the JSON lines go. Default: stdout. Tests pass a stream they read back. */
  destination?: DestinationStream;
}

/**
 * Structured logging (nestjs-pino): JSON lines at `LOG_LEVEL` (`silent` logs nothing), a request id
 * for every request (`x-request-id`, echoed when safe, else a UUID), and one line per request at its
 * completion (see `requestLoggerOptions`). Import once, in the root module: `LoggingModule.forRoot()`.
 *
 * The bootstrap then makes Nest log through it, and mounts `earlyRequestMiddleware` before the body
 * parsers so that a body they refuse (400, 413) still gets its request id and its log line:
 *
 *     const app = await NestFactory.create(AppModule, { bufferLogs: true });
 *     app.useLogger(app.get(Logger));    // Logger from 'nestjs-pino'
 *     app.use(earlyRequestMiddleware);   // first, before app.useBodyParser / enableCors
 *
 * nestjs-pino builds its pino-http instance once per process: the first application created in a
 * process fixes the level and destination for every later one (tests booting several apps share it).
 * Requires `AppConfig` (the global AppConfigModule).
 */
@Module({})
export class LoggingModule {
  static forRoot(options: LoggingModuleOptions = {}): DynamicModule {
    return {
      module: LoggingModule,
      imports: [
        LoggerModule.forRootAsync({
          inject: [AppConfig],
          useFactory: (config: AppConfig): Params<LoggedRequest, ServerResponse> => {
            const pinoHttp = requestLoggerOptions(config.logLevel);
            // At `silent` the request logger would write nothing, so it is mounted on no route: that saves its
            // child loggers and the AsyncLocalStorage it runs each request in, whose promise hooks (Node 20)
            // double the CPU of every database round trip under load.
            const silent = config.logLevel === 'silent' ? { forRoutes: [] } : {};
            return { pinoHttp: options.destination ? [pinoHttp, options.destination] : pinoHttp, ...silent };
          },
        }),
      ],
    };
  }
}
