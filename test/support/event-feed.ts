import type { DomainEvent } from '../../src/events/domain-events.js';
import { EventLogRepository } from '../../src/events/event-log.repository.js';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { EventRelay } from '../../src/events/event-relay.js';
import { stageEvent } from '../../src/events/pending-event.schema.js';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { listen } from './sse-client.js';
import { createTestApp, type TestApp } from './test-app.js';

export interface PublishOptions {
  /** `executionId` of the events: `<label>-<i>`. */
  label?: string;
  /** Makes each event about this many bytes bigger. */
  padding?: number;
  /** Logs them all in one append (one EVENTS_LOGGED batch) instead of one after another. */
  oneBatch?: boolean;
}

/**
 * Logs `count` `flow.executed` events for the company, as an extension publishing its own events would
 * (EventPublisher), and answers them as logged (ids and sequences).
 */
export async function publishEvents(t: TestApp, companyId: string, count: number, options: PublishOptions = {}): Promise<DomainEvent<'flow.executed'>[]> {
  const { label = 'run', padding = 0 } = options;
  const data = (i: number) => ({
    execution: {
      executionId: `${label}-${i}`,
      flowId: 'flow',
      conversationId: 'conversation',
      status: 'completed' as const,
      steps: padding ? [{ type: 'send_message', status: 'completed' as const, error: 'x'.repeat(padding) }] : [],
    },
  });
  if (options.oneBatch) {
    const events = Array.from({ length: count }, (_, i) => stageEvent('flow.executed', data(i)));
    await t.app.get(EventRelay).relay(companyId, [{ source: null, docId: null, events }]);
    return (await t.app.get(EventLogRepository).byIds(companyId, events.map((event) => event.id))) as DomainEvent<'flow.executed'>[];
  }
  const published: DomainEvent<'flow.executed'>[] = [];
  for (let i = 0; i < count; i++) published.push(await t.app.get(EventPublisher).publish(companyId, 'flow.executed', data(i)));
  return published;
}

/** API processes on one engine of their own, each listening on 127.0.0.1: a small deployment. */
export interface Deployment {
  engine: EmbeddedMongo;
  apps: TestApp[];
  bases: string[];
  /** Another process on the same database, with its own settings. */
  add(env?: Record<string, string>): Promise<{ app: TestApp; base: string }>;
  stop(): Promise<void>;
}

export async function startDeployment(database: string, env: Record<string, string>, processes = 2): Promise<Deployment> {
  const engine = await startEmbeddedMongo();
  const apps: TestApp[] = [];
  const bases: string[] = [];
  const add = async (own: Record<string, string> = env) => {
    const app = await createTestApp({ env: { ...own, MONGODB_URI: `${engine.uri}${database}` } });
    apps.push(app);
    bases.push(await listen(app.app));
    return { app, base: bases[bases.length - 1] };
  };
  for (let i = 0; i < processes; i++) await add();
  return {
    engine,
    apps,
    bases,
    add,
    stop: async () => {
      for (const app of apps) await app.close();
      await engine.stop();
    },
  };
}
