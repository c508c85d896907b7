import { startApp } from './app.mjs';
import { describeMachine, uptime } from './machine.mjs';
import { connect } from './seed.mjs';

export { uptime };
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A scenario's progress on stderr, each line `[bench:<name> hh:mm:ss] ...` (stdout holds its figures). */
export const progressLog = (name) => (line) => process.stderr.write(`[bench:${name} ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

/**
 * What a scenario script starts with: the machine and its load, the built app with the engine in its own process,
 * and a driver connection to its database; `stop` ends the three.
 */
export async function startScenario() {
  const machine = describeMachine();
  const loadBefore = uptime();
  const { app, engine, base, databaseUri } = await startApp({ engineProcess: true });
  const { client, db } = await connect(databaseUri);
  const stop = async () => {
    await client.close();
    await app.stop();
    await engine?.stop();
  };
  return { machine, loadBefore, app, engine, base, db, stop };
}
