import { Controller, Get, HttpStatus, Res, VERSION_NEUTRAL } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import type { Connection } from 'mongoose';
import { Public } from '../auth/decorators/public.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { HealthView } from './health.view.js';

const PING_TIMEOUT_MS = 2_000;

@ApiTags('Health')
@Public()
@SkipThrottle()
@Controller({ path: 'health', version: VERSION_NEUTRAL })
export class HealthController {
  constructor(@InjectConnection() private readonly connection: Connection) {}

  @Get()
  @ApiOperation({
    summary: 'Liveness and database reachability; no authentication',
    description: '200 while the database answers a ping within 2 s, 503 otherwise; not rate limited.',
  })
  @ApiOkResponse({ type: HealthView })
  @ApiServiceUnavailableResponse({ type: HealthView, description: 'The database does not answer' })
  // Like every route: a body that is sent must be well-formed JSON.
  @ApiProblemResponses(400)
  async check(@Res({ passthrough: true }) response: Response): Promise<HealthView> {
    const up = await this.pingDatabase();
    if (!up) response.status(HttpStatus.SERVICE_UNAVAILABLE);
    return { status: up ? 'ok' : 'degraded', database: up ? 'up' : 'down' };
  }

  private async pingDatabase(): Promise<boolean> {
    const db = this.connection.readyState === 1 ? this.connection.db : undefined;
    if (!db) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), PING_TIMEOUT_MS)));
    try {
      return await Promise.race([db.admin().ping().then(() => true), timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }
}
