import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { Agent, request, type Dispatcher } from 'undici';
import { AppConfig } from '../../config/app-config.js';
import { checkUrlWithoutDns, createGuardedLookup, UnsafeWebhookUrlError } from './ssrf-guard.js';

/** How much of a failing receiver's answer goes into the attempt log. */
const EXCERPT_BYTES = 256;

export interface SendResult {
  /** null when no answer came. */
  statusCode: number | null;
  durationMs: number;
  /** null for a 2xx. */
  error: string | null;
  /** The Retry-After header of the answer, if any. */
  retryAfter?: string;
}

async function excerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    // Leaving the loop destroys the stream: the rest of the body is never read.
    if (size >= EXCERPT_BYTES) break;
  }
  return Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8').replace(/\s+/g, ' ').trim();
}

function describeStatus(statusCode: number, text: string): string {
  if (statusCode >= 300 && statusCode < 400) return `HTTP ${statusCode}: redirects are not followed`;
  return text ? `HTTP ${statusCode}: ${text}` : `HTTP ${statusCode}`;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

function describeError(error: unknown, timeoutMs: number): string {
  const { name, code, message } = error as { name?: string; code?: string; message?: string };
  if (name === 'TimeoutError' || TIMEOUT_CODES.has(code ?? '')) return `Timed out after ${timeoutMs} ms`;
  if (error instanceof UnsafeWebhookUrlError) return error.message.replace(/^url refused/, 'refused');
  return code ? `${code}: ${message}` : (message ?? String(error));
}

/**
 * POSTs one attempt with undici: no redirects followed (a 3xx is a failure), the whole attempt
 * bounded by WEBHOOK_TIMEOUT_MS, the answer's body discarded but for an excerpt of a failure. Unless
 * private targets are allowed, IP literals are checked here and names inside the connection's DNS
 * lookup, so the socket goes to the very address that was checked.
 */
@Injectable()
export class WebhookSender implements OnApplicationShutdown {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly guarded: boolean;

  constructor(config: AppConfig) {
    this.timeoutMs = config.webhookTimeoutMs;
    this.guarded = !config.webhookAllowPrivateUrls;
    this.agent = new Agent({
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connect: { timeout: this.timeoutMs, ...(this.guarded ? { lookup: createGuardedLookup() } : {}) },
    });
  }

  async post(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      if (this.guarded) checkUrlWithoutDns(url);
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const { statusCode } = response;
      if (statusCode >= 200 && statusCode < 300) {
        await response.body.dump();
        return { statusCode, durationMs: elapsed(), error: null };
      }
      const retryAfter = response.headers['retry-after'];
      const text = await excerpt(response.body);
      return {
        statusCode,
        durationMs: elapsed(),
        error: describeStatus(statusCode, text),
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      };
    } catch (error) {
      return { statusCode: null, durationMs: elapsed(), error: describeError(error, this.timeoutMs) };
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }
}
