import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Logger as NestLogger, Module, Req, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Logger, PinoLogger } from 'nestjs-pino';
import request from 'supertest';
import { AppConfigModule } from '../../config/app-config.module.js';
import { earlyRequestMiddleware } from './early-request.middleware.js';
import { LoggingModule } from './logging.module.js';

// Its own file: nestjs-pino keeps one logger per process (per test file under jest), fixed by the first app.

@Controller()
class QuietController {
  constructor(private readonly pino: PinoLogger) {}

  @Get('hello')
  hello() {
    new NestLogger('Quiet').error('not even errors');
    return { ok: true };
  }

  @Get('context')
  async context(@Req() req: { log?: unknown }) {
    await Promise.resolve();
    return { requestLogger: req.log !== undefined, requestContext: this.pino.logger !== PinoLogger.root };
  }
}

@Module({
  imports: [AppConfigModule.forRoot({ NODE_ENV: 'test', LOG_LEVEL: 'silent' })],
  controllers: [QuietController],
})
class QuietModule {}

describe('LoggingModule with LOG_LEVEL=silent', () => {
  const written: string[] = [];
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [QuietModule, LoggingModule.forRoot({ destination: { write: (line: string) => written.push(line) } })],
    }).compile();
    app = moduleRef.createNestApplication({ bufferLogs: true });
    app.useLogger(app.get(Logger));
    app.use(earlyRequestMiddleware);
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('logs nothing at all, and still gives every response its request id', async () => {
    const ok = await request(app.getHttpServer()).get('/hello').set('x-request-id', 'quiet-1').expect(200);
    expect(ok.headers['x-request-id']).toBe('quiet-1');
    const missing = await request(app.getHttpServer()).get('/missing').expect(404);
    expect(missing.headers['x-request-id']).toBeTruthy();
    await request(app.getHttpServer()).post('/hello').set('content-type', 'application/json').send('{').expect(400);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(written).toEqual([]);
  });

  it('does not mount the request logger, nor run requests in its async context', async () => {
    const res = await request(app.getHttpServer()).get('/context').expect(200);
    expect(res.body).toEqual({ requestLogger: false, requestContext: false });
  });
});
