/** What closes one started app (or a promise of one still starting). */
type Closable = { close(): Promise<void> };

const starting = new Set<Promise<Closable | undefined>>();

/**
 * Remembers an app this test file is starting. A hook that times out (a busy machine) leaves its app starting after
 * jest has moved on: the file's own `afterAll` never sees it, and its engine, sockets and timers would keep the worker
 * alive ("A worker process has failed to exit gracefully"). `closeOpenApps` closes it once it is up.
 */
export function trackApp<T extends Closable>(app: Promise<T>): Promise<T> {
  const tracked = app.catch(() => undefined);
  starting.add(tracked);
  return app;
}

/** Closes every app the file started and did not close (closing one twice is harmless: TestApp.close is memoized). */
export async function closeOpenApps(): Promise<void> {
  const apps = await Promise.all(starting);
  starting.clear();
  await Promise.all(apps.flatMap((app) => app?.close() ?? []));
}
