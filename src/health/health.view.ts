export class HealthView {
  status: 'ok' | 'degraded';
  database: 'up' | 'down';
}
