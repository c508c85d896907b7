// Worker thread: GET /health every `intervalMs` until told to stop, then posts every probe's latency (ms) or error.
// On a thread of its own so that the load generator's busy event loop does not inflate what it measures.
import { parentPort, workerData } from 'node:worker_threads';
import { Agent, request } from 'undici';

const { url, intervalMs, timeoutMs } = workerData;
// A connection of its own, as a monitoring probe would have.
const dispatcher = new Agent({ connections: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
const probes = [];
let stopped = false;
parentPort.once('message', () => (stopped = true));

while (!stopped) {
  const started = performance.now();
  try {
    const response = await request(url, { dispatcher, signal: AbortSignal.timeout(timeoutMs) });
    await response.body.text();
    probes.push({ ms: performance.now() - started, status: response.statusCode });
  } catch (error) {
    probes.push({ ms: performance.now() - started, error: error.code ?? error.name });
  }
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, intervalMs - (performance.now() - started))));
}
parentPort.postMessage(probes);
await dispatcher.close();
