export class HealthView {
  status: 'ok' | 'degraded';
  database: 'up' | 'down';
}

/** The process answers: nothing else is looked at. */
export class LivenessView {
  status: 'ok';
}

/** Whether this process should receive traffic, and why not when it should not. */
export class ReadinessView {
  status: 'ready' | 'unavailable';
  database: 'up' | 'down';
  /** The event relay, which moves a change's events into the log. */
  relay: 'running' | 'stopped';
  /** The lane worker, which runs every reaction (webhooks, flows, routing, timers). */
  lanes: 'running' | 'stopped';
  shuttingDown: boolean;
}
