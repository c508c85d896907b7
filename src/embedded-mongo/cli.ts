/**
 * Standalone server: `node dist/embedded-mongo/cli.js [--port 27017] [--host 127.0.0.1]` (or `npm run db -- --port 27017`).
 * Logs the URI to connect to; SIGINT/SIGTERM stop it cleanly.
 */
import { startEmbeddedMongo } from './index.js';

function parseArgs(argv: string[]): { host?: string; port?: number } {
  const out: { host?: string; port?: number } = {};
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = inline ?? argv[++i];
    if (flag === '--port') {
      const port = Number(value);
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be an integer 0..65535, got ${value}`);
      out.port = port;
    } else if (flag === '--host') {
      if (!value) throw new Error('--host needs a value');
      out.host = value;
    } else {
      throw new Error(`unknown argument ${argv[i]} (usage: cli.js [--port 27017] [--host 127.0.0.1])`);
    }
  }
  return out;
}

async function main(): Promise<void> {
  const engine = await startEmbeddedMongo({ ...parseArgs(process.argv.slice(2)), log: (line) => console.error(line) });
  console.log(`embedded-mongo: in-memory MongoDB-compatible server listening, connect with ${engine.uri}`);
  const shutdown = (signal: string) => {
    console.log(`embedded-mongo: ${signal} received, stopping`);
    engine.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: Error) => {
  console.error(`embedded-mongo: ${err.message}`);
  process.exit(1);
});
