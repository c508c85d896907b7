import { Global, Module } from '@nestjs/common';
import { Metrics } from './metrics.js';
import { MetricsServer } from './metrics-server.js';

/** The process's Prometheus metrics: any module records into Metrics; GET /metrics serves them (docs/operations.md). */
@Global()
@Module({ providers: [Metrics, MetricsServer], exports: [Metrics] })
export class MetricsModule {}
