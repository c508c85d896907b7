import type { ServerResponse } from 'node:http';

/**
 * The headers that belong to the answer rather than to the request that got it (as `x-request-id` and the
 * rate-limit headers do): a retry gets them again. `Cache-Control` too, so that an answer marked `no-store`
 * (it carries a secret) is marked so again.
 */
const KEPT_HEADERS = new Set(['content-type', 'location', 'cache-control']);

/** An answer as it went out: what a retry gets again. */
export interface CapturedAnswer {
  status: number;
  /** By lower-case name. */
  headers: Record<string, string>;
  body: Buffer;
}

function keptHeaders(response: ServerResponse): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of response.getHeaderNames()) {
    if (KEPT_HEADERS.has(name)) headers[name] = String(response.getHeader(name));
  }
  return headers;
}

function bytesOf(chunk: unknown, encoding: unknown): Buffer | null {
  if (chunk === undefined || chunk === null || typeof chunk === 'function') return null;
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
}

/**
 * Records the bytes written to `response`, whoever writes them (the route's reply, or the exception
 * filter's error body), and when the response is ended hands the answer to `keep` and ends it only
 * once `keep` has settled: a client that has the answer finds it kept when it retries. `keep` must not
 * reject.
 */
export function captureAnswer(response: ServerResponse, keep: (answer: CapturedAnswer) => Promise<void>): void {
  const { write, end } = response;
  const chunks: Buffer[] = [];
  const record = (chunk: unknown, encoding: unknown) => {
    const bytes = bytesOf(chunk, encoding);
    if (bytes) chunks.push(bytes);
  };
  response.write = function (this: ServerResponse, ...args: unknown[]) {
    record(args[0], args[1]);
    return (write as (...args: unknown[]) => boolean).apply(this, args);
  } as ServerResponse['write'];
  response.end = function (this: ServerResponse, ...args: unknown[]) {
    response.write = write;
    response.end = end;
    record(args[0], args[1]);
    const answer: CapturedAnswer = { status: response.statusCode, headers: keptHeaders(response), body: Buffer.concat(chunks) };
    void keep(answer).finally(() => (end as (...args: unknown[]) => ServerResponse).apply(response, args));
    return response;
  } as ServerResponse['end'];
}
