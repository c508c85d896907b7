import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  Body,
  Controller,
  Get,
  Logger as NestLogger,
  Module,
  Post,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Logger } from 'nestjs-pino';
import request from 'supertest';
import type { AuthPrincipal } from '../../auth/auth-principal.js';
import { AppConfigModule } from '../../config/app-config.module.js';
import { earlyRequestMiddleware } from './early-request.middleware.js';
import { LoggingModule } from './logging.module.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The secrets a caller sends; none may reach the log. */
const BEARER = 'eyJhbGciOiJIUzI1NiJ9.SECRET-BEARER-TOKEN.sig';
const API_KEY = 'pk_live_SECRET-API-KEY-VALUE';
const PASSWORD = 'hunter2-SECRET-PASSWORD';
const COOKIE = 'session=SECRET-COOKIE-VALUE';

/** A destination that keeps every JSON line written to it. */
class CapturedLines {
  readonly lines: string[] = [];
  write(chunk: string): void {
    this.lines.push(...chunk.split('\n').filter((line) => line !== ''));
  }
  get records(): Array<Record<string, any>> {
    return this.lines.map((line) => JSON.parse(line));
  }
  /** The completion lines of one request (they are written when the response finishes). */
  async requestLines(requestId: string): Promise<Array<Record<string, any>>> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const found = this.records.filter((record) => record.req?.id === requestId && 'responseTime' in record);
      if (found.length > 0) return found;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return [];
  }
}

/** Stands in for the authentication guard: `x-test-agent` or `x-test-key` authenticates the caller. */
class FakeAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest();
    const agentId = req.headers['x-test-agent'];
    const apiKeyId = req.headers['x-test-key'];
    let user: AuthPrincipal | undefined;
    if (agentId) user = { kind: 'agent', agentId, companyId: 'company-1', role: 'admin' };
    if (apiKeyId) user = { kind: 'api-key', apiKeyId, companyId: 'company-2', scopes: [], channels: null };
    req.user = user;
    return true;
  }
}

@Controller()
class ProbeController {
  private readonly logger = new NestLogger('Probe');

  @Get('hello')
  hello() {
    this.logger.log('saying hello');
    return { hello: 'world' };
  }

  @Post('login')
  login(@Body() body: { email: string; password: string }) {
    return { email: body.email };
  }

  @Get('boom')
  boom(): never {
    throw new Error('kaput');
  }
}

@Module({
  imports: [AppConfigModule.forRoot({ NODE_ENV: 'test', LOG_LEVEL: 'info' })],
  controllers: [ProbeController],
  providers: [{ provide: APP_GUARD, useClass: FakeAuthGuard }],
})
class ProbeModule {}

const destination = new CapturedLines();

/** An app as the bootstrap makes it; nestjs-pino keeps one pino-http per process, so both share `destination`. */
async function bootApp(options: { earlyMiddleware: boolean }): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [ProbeModule, LoggingModule.forRoot({ destination })],
  }).compile();
  const app = moduleRef.createNestApplication({ bufferLogs: true });
  app.useLogger(app.get(Logger));
  if (options.earlyMiddleware) app.use(earlyRequestMiddleware);
  await app.init();
  return app;
}

describe('LoggingModule', () => {
  let app: INestApplication;

  beforeAll(async () => {
    app = await bootApp({ earlyMiddleware: false });
  });
  afterAll(async () => {
    await app?.close();
  });
  beforeEach(() => {
    destination.lines.length = 0;
  });

  describe('request ids, with the module alone (its middleware on every route)', () => {
    it('echoes a safe x-request-id', async () => {
      const res = await request(app.getHttpServer()).get('/hello').set('x-request-id', 'trace-42:a.B_c').expect(200);
      expect(res.headers['x-request-id']).toBe('trace-42:a.B_c');
      expect(await destination.requestLines('trace-42:a.B_c')).toHaveLength(1);
    });

    it('generates a UUID when none is sent', async () => {
      const res = await request(app.getHttpServer()).get('/hello').expect(200);
      expect(res.headers['x-request-id']).toMatch(UUID);
    });

    it.each([
      ['spaces', 'not a token'],
      ['markup', '<script>alert(1)</script>'],
      ['too long', 'a'.repeat(129)],
    ])('replaces an unsafe one (%s) with a UUID', async (_kind, sent) => {
      const res = await request(app.getHttpServer()).get('/hello').set('x-request-id', sent).expect(200);
      expect(res.headers['x-request-id']).toMatch(UUID);
      expect(destination.lines.join('\n')).not.toContain(sent);
    });

    it('answers an unknown route (404) with a request id, and logs it', async () => {
      const res = await request(app.getHttpServer()).get('/no/such/route').expect(404);
      expect(res.headers['x-request-id']).toMatch(UUID);
      const [line] = await destination.requestLines(res.headers['x-request-id']);
      expect(line).toMatchObject({ level: 'info', req: { method: 'GET', url: '/no/such/route' }, res: { statusCode: 404 } });
    });
  });

  describe('the request log', () => {
    it('writes one line per request when it completes, with method, url, status, duration and id', async () => {
      const res = await request(app.getHttpServer()).get('/hello?x=1').set('x-request-id', 'one-line').expect(200);
      const lines = await destination.requestLines('one-line');
      expect(lines).toHaveLength(1);
      const [line] = lines;
      expect(line).toMatchObject({
        level: 'info',
        requestId: 'one-line',
        req: { id: 'one-line', method: 'GET', url: '/hello?x=1' },
        res: { statusCode: 200 },
        msg: 'request completed',
      });
      expect(typeof line.responseTime).toBe('number');
      expect(typeof line.req.remoteAddress).toBe('string');
      // small: no headers, no query object
      expect(Object.keys(line.req).sort()).toEqual(['id', 'method', 'remoteAddress', 'url']);
      expect(Object.keys(line.res)).toEqual(['statusCode']);
      // no principal on an anonymous request
      expect(line).not.toHaveProperty('companyId');
      expect(res.headers['x-request-id']).toBe('one-line');
    });

    it('never writes the values of search parameters (a contact search: names, e-mails, phones)', async () => {
      await request(app.getHttpServer())
        .get('/hello?search=ann%40example.com&limit=5&sea%72ch=Ann+Smith&search[$ne]=x')
        .set('x-request-id', 'searched')
        .expect(200);
      const [line] = await destination.requestLines('searched');
      expect(line.req.url).toBe('/hello?search=[redacted]&limit=5&sea%72ch=[redacted]&search[$ne]=[redacted]');
      expect(destination.lines.join('\n')).not.toMatch(/ann|Ann|Smith/);
    });

    it('tags logs made while handling the request with its id', async () => {
      await request(app.getHttpServer()).get('/hello').set('x-request-id', 'in-handler').expect(200);
      await destination.requestLines('in-handler');
      const said = destination.records.find((record) => record.msg === 'saying hello');
      expect(said).toMatchObject({ requestId: 'in-handler', context: 'Probe', level: 'info' });
      expect(said).not.toHaveProperty('req');
    });

    it('adds the company and the agent of a bearer caller', async () => {
      await request(app.getHttpServer()).get('/hello').set('x-request-id', 'as-agent').set('x-test-agent', 'agent-7');
      const [line] = await destination.requestLines('as-agent');
      expect(line).toMatchObject({ companyId: 'company-1', agentId: 'agent-7' });
      expect(line).not.toHaveProperty('apiKeyId');
    });

    it('adds the company and the key of an API-key caller', async () => {
      await request(app.getHttpServer()).get('/hello').set('x-request-id', 'as-key').set('x-test-key', 'key-9');
      const [line] = await destination.requestLines('as-key');
      expect(line).toMatchObject({ companyId: 'company-2', apiKeyId: 'key-9' });
      expect(line).not.toHaveProperty('agentId');
    });

    it('logs a 5xx at error level', async () => {
      await request(app.getHttpServer()).get('/boom').set('x-request-id', 'five-hundred').expect(500);
      const [line] = await destination.requestLines('five-hundred');
      expect(line).toMatchObject({ level: 'error', res: { statusCode: 500 }, msg: 'request errored' });
      expect(line).not.toHaveProperty('err'); // no made-up error with pino-http's stack
    });

    it('never writes credentials or bodies', async () => {
      await request(app.getHttpServer())
        .post('/login')
        .set('x-request-id', 'secrets')
        .set('authorization', `Bearer ${BEARER}`)
        .set('x-api-key', API_KEY)
        .set('cookie', COOKIE)
        .send({ email: 'ann@example.com', password: PASSWORD })
        .expect(201);
      await request(app.getHttpServer())
        .get('/boom')
        .set('x-request-id', 'secrets-500')
        .set('authorization', `Bearer ${BEARER}`)
        .set('x-api-key', API_KEY)
        .expect(500);
      expect(await destination.requestLines('secrets')).toHaveLength(1);
      expect(await destination.requestLines('secrets-500')).toHaveLength(1);
      const output = destination.lines.join('\n');
      for (const secret of ['SECRET-BEARER-TOKEN', 'SECRET-API-KEY-VALUE', 'SECRET-PASSWORD', 'SECRET-COOKIE-VALUE']) {
        expect(output).not.toContain(secret);
      }
      expect(output).not.toContain('ann@example.com');
    });
  });
});

describe('earlyRequestMiddleware used first by the bootstrap', () => {
  let app: INestApplication;

  beforeAll(async () => {
    app = await bootApp({ earlyMiddleware: true });
  });
  afterAll(async () => {
    await app?.close();
  });
  beforeEach(() => {
    destination.lines.length = 0;
  });

  it('gives malformed JSON (400) its request id and its log line', async () => {
    const res = await request(app.getHttpServer())
      .post('/login')
      .set('content-type', 'application/json')
      .set('x-request-id', 'bad-json')
      .send('{"email": ')
      .expect(400);
    expect(res.headers['x-request-id']).toBe('bad-json');
    const lines = await destination.requestLines('bad-json');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      requestId: 'bad-json',
      req: { id: 'bad-json', method: 'POST', url: '/login' },
      res: { statusCode: 400 },
      msg: 'request completed',
    });
    expect(Object.keys(lines[0].req).sort()).toEqual(['id', 'method', 'remoteAddress', 'url']);
  });

  it('gives a body over the parser limit (413) a generated request id and its log line', async () => {
    const res = await request(app.getHttpServer())
      .post('/login')
      .set('content-type', 'application/json')
      .set('authorization', `Bearer ${BEARER}`)
      .send(JSON.stringify({ email: 'x'.repeat(200_000), password: PASSWORD }))
      .expect(413);
    expect(res.headers['x-request-id']).toMatch(UUID);
    const lines = await destination.requestLines(res.headers['x-request-id']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ res: { statusCode: 413 } });
    expect(destination.lines.join('\n')).not.toMatch(/SECRET|xxxxxxxx/);
  });

  it('lets the request logger reuse the id it set, one line per request still', async () => {
    const res = await request(app.getHttpServer()).get('/hello').expect(200);
    const id = res.headers['x-request-id'];
    expect(id).toMatch(UUID);
    const lines = await destination.requestLines(id);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ requestId: id, req: { id } });
    const unknown = await request(app.getHttpServer()).get('/nowhere').set('x-request-id', 'early-404').expect(404);
    expect(unknown.headers['x-request-id']).toBe('early-404');
    expect(await destination.requestLines('early-404')).toHaveLength(1);
  });
});
