// The engine drills' server: `node dist/cli.js` of this package (run `npm run build` first, or `npm run drill`) on
// 127.0.0.1, as its own process. Every engine started here is killed when the drill ends, fails or is interrupted.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const STARTUP_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 20_000;
/** Output kept per engine, printed when it fails to start. */
const OUTPUT_TAIL_CHARS = 4000;

const children = new Set();
const killAll = () => {
  for (const child of children) child.kill('SIGKILL');
};
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the drill's engine`);
    killAll();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

/**
 * Starts the engine on `port` (default: an ephemeral one), in memory or on `dataDir`, with `args` added. Answers its
 * URI (without database, no trailing slash), its pid, its exit, its output so far, `kill()` (SIGKILL: a crash) and
 * `stop()` (SIGTERM: a clean shutdown, SIGKILL after 20 s).
 */
export async function startEngine({ dataDir, port = 0, args = [] } = {}) {
  const flags = ['--host', '127.0.0.1', '--port', String(port), ...(dataDir ? ['--data-dir', dataDir] : []), ...args];
  const child = spawn(process.execPath, [CLI, ...flags], { env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  exited.then(() => children.delete(child));
  const uri = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), STARTUP_TIMEOUT_MS);
    child.stdout.on('data', () => {
      const match = /connect with (mongodb:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1].replace(/\/$/, ''));
      }
    });
    exited.then((status) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${status}`));
    });
  }).catch((failure) => {
    child.kill('SIGKILL');
    throw new Error(`the engine did not start (${failure.message}). Its last output:\n${output}`);
  });
  return {
    uri,
    pid: child.pid,
    exited,
    output: () => output,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
