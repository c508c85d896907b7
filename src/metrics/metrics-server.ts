import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { AppConfig } from '../config/app-config.js';
import { Metrics } from './metrics.js';
import { METRICS_PATH, metricsHandler } from './metrics-endpoint.js';

/** GET /metrics on METRICS_PORT, a listener of its own (not reachable through the API's port), when it is set. */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private server?: Server;

  constructor(
    private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  /** The port it listens on (METRICS_PORT=0 asks the system for a free one), or undefined when it does not. */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { port } = this.config.metrics;
    if (port === undefined) return;
    const serve = metricsHandler(this.metrics, undefined);
    this.server = createServer((request, response) => {
      if (request.method === 'GET' && request.url?.split('?')[0] === METRICS_PATH) serve(request, response);
      else response.writeHead(404).end();
    });
    this.server.listen(port);
    await once(this.server, 'listening');
    new Logger(MetricsServer.name).log(`Metrics on port ${this.port}${METRICS_PATH}`);
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server!.close(resolve));
  }
}
