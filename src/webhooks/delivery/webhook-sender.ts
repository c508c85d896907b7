import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { Agent, request, type Dispatcher } from 'undici';
import { AppConfig } from '../../config/app-config.js';
import { checkUrlWithoutDns, createGuardedLookup, UnsafeWebhookUrlError, type TargetPolicy } from './ssrf-guard.js';

/**
 * The most of a target's words kept in an attempt's error: what a failing receiver answered, or what
 * went wrong. A target writes into our store through it, so it is bounded (1 KB).
 */
export const STORED_REPLY_BYTES = 1024;

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
    if (size >= STORED_REPLY_BYTES) break;
  }
  return Buffer.concat(chunks).subarray(0, STORED_REPLY_BYTES).toString('utf8').replace(/\s+/g, ' ').trim();
}

/** At most STORED_REPLY_BYTES of UTF-8, cut on a character boundary. */
export function boundedText(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= STORED_REPLY_BYTES) return text;
  return bytes.subarray(0, STORED_REPLY_BYTES).toString('utf8').replace(/\uFFFD$/, '');
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
 * bounded by WEBHOOK_TIMEOUT_MS, the answer's body discarded but for an excerpt of a failure (the error
 * kept is at most STORED_REPLY_BYTES). IP literals are checked here and names inside the connection's DNS
 * lookup, so the socket goes to the very address that was checked: cloud metadata always, and everything
 * but public addresses unless private targets are allowed.
 */
@Injectable()
export class WebhookSender implements OnApplicationShutdown {
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly policy: TargetPolicy;

  constructor(config: AppConfig) {
    this.timeoutMs = config.webhookTimeoutMs;
    this.policy = { allowPrivate: config.webhookAllowPrivateUrls };
    this.agent = new Agent({
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connect: { timeout: this.timeoutMs, lookup: createGuardedLookup(this.policy) },
    });
  }

  async post(url: string, headers: Record<string, string>, body: string): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    // The whole attempt's bound, cleared as soon as it ends: AbortSignal.timeout's timer would outlive every
    // attempt by the timeout, thousands of them at a time on a fast receiver.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new DOMException('The attempt timed out', 'TimeoutError')), this.timeoutMs);
    try {
      checkUrlWithoutDns(url, this.policy);
      const response = await request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal: abort.signal,
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
        error: boundedText(describeStatus(statusCode, text)),
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
      };
    } catch (error) {
      return { statusCode: null, durationMs: elapsed(), error: boundedText(describeError(error, this.timeoutMs)) };
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }
}
