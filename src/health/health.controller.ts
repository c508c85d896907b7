import { Controller, Get, HttpStatus, Res, VERSION_NEUTRAL } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { SkipThrottle } from '@nestjs/throttler';
import type { Response } from 'express';
import type { Connection } from 'mongoose';
import { Public } from '../auth/decorators/public.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { EventRelay } from '../events/event-relay.js';
import { LaneWorker } from '../lanes/lane-worker.js';
import { HealthView, LivenessView, ReadinessView } from './health.view.js';
import { ShutdownState } from './shutdown-state.js';

const PING_TIMEOUT_MS = 2_000;

@ApiTags('Health')
@Public()
@SkipThrottle()
@Controller({ path: 'health', version: VERSION_NEUTRAL })
export class HealthController {
  constructor(
    @InjectConnection() private readonly connection: Connection,
    private readonly relay: EventRelay,
    private readonly lanes: LaneWorker,
    private readonly shutdown: ShutdownState,
  ) {}

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

  @Get('live')
  @ApiOperation({
    summary: 'Liveness: the process answers; no authentication',
    description: 'Always 200 while the process serves HTTP: an orchestrator restarts it when this fails. Not rate limited.',
  })
  @ApiOkResponse({ type: LivenessView })
  @ApiProblemResponses(400)
  live(): LivenessView {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({
    summary: 'Readiness: this process should receive traffic; no authentication',
    description:
      '200 while the database answers a ping within 2 s, the event relay and the lanes run and the process is not ' +
      'shutting down; 503 otherwise (from the moment SIGTERM is received, while in-flight work finishes). Not rate limited.',
  })
  @ApiOkResponse({ type: ReadinessView })
  @ApiServiceUnavailableResponse({ type: ReadinessView, description: 'Not ready: the body says which part is not' })
  @ApiProblemResponses(400)
  async ready(@Res({ passthrough: true }) response: Response): Promise<ReadinessView> {
    const shuttingDown = this.shutdown.shuttingDown;
    const database = await this.pingDatabase();
    const relay = this.relay.isRunning;
    const lanes = this.lanes.isRunning;
    const ready = database && relay && lanes && !shuttingDown;
    if (!ready) response.status(HttpStatus.SERVICE_UNAVAILABLE);
    return {
      status: ready ? 'ready' : 'unavailable',
      database: database ? 'up' : 'down',
      relay: relay ? 'running' : 'stopped',
      lanes: lanes ? 'running' : 'stopped',
      shuttingDown,
    };
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
