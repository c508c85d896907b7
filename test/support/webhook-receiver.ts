import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './wait-for.js';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Date.now() when the request had fully arrived. */
  at: number;
}

/** How the receiver answers one request; defaults: 200, no delay, no headers, empty body. */
export interface Answer {
  status?: number;
  delayMs?: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A real HTTP server on 127.0.0.1 that records every request and answers as programmed, per path:
 * `answer(path, ...answers)` queues answers used in turn (the last one repeats).
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly answers = new Map<string, Answer[]>();
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const receiver = new WebhookReceiver(server, `http://127.0.0.1:${port}`);
    server.on('request', (request, response) => receiver.handle(request, response));
    return receiver;
  }

  /** A URL of this receiver; give each webhook its own path to tell their requests apart. */
  url(path: string): string {
    return this.baseUrl + path;
  }

  answer(path: string, ...answers: Answer[]): void {
    this.answers.set(path, answers);
  }

  to(path: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  /** Waits until `path` has received at least `count` requests, and answers them. */
  async received(path: string, count: number, timeoutMs = 5000): Promise<ReceivedRequest[]> {
    return waitFor(() => this.to(path).length >= count && this.to(path), { timeoutMs, message: `${count} request(s) to ${path}` });
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      this.requests.push({ method: request.method ?? '', path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const queue = this.answers.get(path) ?? [];
      const answer = (queue.length > 1 ? queue.shift() : queue[0]) ?? {};
      const reply = () => {
        if (response.destroyed) return;
        response.writeHead(answer.status ?? 200, answer.headers);
        response.end(answer.body ?? '');
      };
      if (!answer.delayMs) return reply();
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        reply();
      }, answer.delayMs);
      this.timers.add(timer);
    });
  }
}
