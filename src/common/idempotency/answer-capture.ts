import type { ServerResponse } from 'node:http';

/** An answer as it went out: what a retry gets again. */
export interface CapturedAnswer {
  status: number;
  contentType: string | null;
  location: string | null;
  body: Buffer;
}

function headerOf(response: ServerResponse, name: string): string | null {
  const value = response.getHeader(name);
  return value === undefined ? null : String(value);
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
    const answer: CapturedAnswer = {
      status: response.statusCode,
      contentType: headerOf(response, 'content-type'),
      location: headerOf(response, 'location'),
      body: Buffer.concat(chunks),
    };
    void keep(answer).finally(() => (end as (...args: unknown[]) => ServerResponse).apply(response, args));
    return response;
  } as ServerResponse['end'];
}
