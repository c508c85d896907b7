import autocannon from 'autocannon';
import { LatencyRecorder } from '../../harness/stats.mjs';

/**
 * One autocannon run. Latencies are taken from every 2xx response at full precision (autocannon's own
 * histogram keeps whole milliseconds); anything but a 2xx counts as an error, and the figure says so.
 * With `server`, also the server's CPU time per request, which other load on the machine barely moves; with
 * `engine` (the database's own process), its CPU time per request too.
 */
export async function loadRun({ url, connections, duration, method = 'GET', headers = {}, body, requests, server, engine }) {
  const latencies = new LatencyRecorder();
  const cpuBefore = server?.cpuMs();
  const engineCpuBefore = engine?.cpuMs();
  const run = autocannon({ url, connections, duration, method, headers, body, requests });
  run.on('response', (_client, status, _bytes, ms) => {
    if (status >= 200 && status < 300) latencies.add(ms);
  });
  const result = await run;
  const requestsServed = result['2xx'] + result.non2xx;
  return {
    rps: result['2xx'] / result.duration,
    cpuUs: server ? ((server.cpuMs() - cpuBefore) * 1000) / requestsServed : NaN,
    engineCpuUs: engine ? ((engine.cpuMs() - engineCpuBefore) * 1000) / requestsServed : NaN,
    p50: latencies.percentile(50),
    p99: latencies.percentile(99),
    errors: result.non2xx + result.errors + result.timeouts,
  };
}

/** `count` requests one after another (no concurrency): the latency of one request on an idle server. */
export async function sequentialLatencies(dispatcher, path, headers, count) {
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const response = await dispatcher.request({ method: 'GET', path, headers });
    await response.body.dump();
    if (response.statusCode !== 200) throw new Error(`GET ${path}: ${response.statusCode}`);
    times.push(performance.now() - started);
  }
  return times;
}
