import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { waitFor } from './wait-for.js';

/** One dispatched Server-Sent Events frame (a frame without `data` is not an event, per the specification). */
export interface SseEvent {
  id: string;
  event: string;
  data: string;
}

/** Makes the app listen on 127.0.0.1 (supertest needs no port; a stream client does) and answers its base URL. */
export async function listen(app: INestApplication): Promise<string> {
  const server = app.getHttpServer();
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A Server-Sent Events client over node:http that parses the stream as the specification says (fields, comments,
 * blank-line dispatch) and keeps everything it received: events, comments, the status, headers and, for an
 * answer that is not a stream, its body.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  readonly comments: { text: string; at: number }[] = [];
  status = 0;
  headers: IncomingHttpHeaders = {};
  body = '';
  /** Resolves when the response ended (`end`: cleanly; `error`: cut). */
  readonly ended: Promise<'end' | 'error'>;
  private finished: (how: 'end' | 'error') => void = () => undefined;
  private buffer = '';
  private pending: Partial<SseEvent> & { data?: string } = {};
  private response?: IncomingMessage;

  private constructor(private readonly cancel: () => void) {
    this.ended = new Promise((resolve) => (this.finished = resolve));
  }

  /** Opens `url` and resolves once the response headers have arrived. */
  static open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    return new Promise((resolve, reject) => {
      const req = request(url, { headers: { accept: 'text/event-stream', ...headers } });
      const client = new SseClient(() => req.destroy());
      req.on('error', (error) => (client.status ? client.finished('error') : reject(error)));
      req.on('response', (response) => {
        client.response = response;
        client.status = response.statusCode ?? 0;
        client.headers = response.headers;
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (client.status === 200 ? client.parse(chunk) : (client.body += chunk)));
        response.on('end', () => client.finished('end'));
        response.on('error', () => client.finished('error'));
        response.on('aborted', () => client.finished('error'));
        resolve(client);
      });
      req.end();
    });
  }

  /** The events' `data`, parsed. */
  get data(): { id: string; type: string; sequence: number; occurredAt: string; companyId: string; data: unknown }[] {
    return this.events.map((event) => JSON.parse(event.data));
  }

  get lastEventId(): string | undefined {
    return this.events.at(-1)?.id;
  }

  async waitForEvents(count: number, timeoutMs = 5000): Promise<SseEvent[]> {
    await waitFor(() => this.events.length >= count, { timeoutMs, message: `${count} stream event(s), got ${this.events.length}` });
    return this.events;
  }

  /** Drops the connection, as a network failure would. */
  close(): void {
    this.response?.destroy();
    this.cancel();
  }

  private parse(chunk: string): void {
    this.buffer += chunk;
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + (this.buffer.startsWith('\r\n', newline) ? 2 : 1));
      this.line(line);
    }
  }

  private line(line: string): void {
    if (line === '') {
      if (this.pending.data !== undefined) {
        this.events.push({ id: this.pending.id ?? '', event: this.pending.event ?? 'message', data: this.pending.data });
      }
      this.pending = {};
      return;
    }
    if (line.startsWith(':')) {
      this.comments.push({ text: line.slice(1).trim(), at: Date.now() });
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'data') this.pending.data = this.pending.data === undefined ? value : `${this.pending.data}\n${value}`;
    else if (field === 'id' || field === 'event') this.pending[field] = value;
  }
}

/** The stream clients a suite opens, dropped together after each test. */
export class SseClients {
  private readonly clients: SseClient[] = [];

  async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const client = await SseClient.open(url, headers);
    this.clients.push(client);
    return client;
  }

  closeAll(): void {
    for (const client of this.clients.splice(0)) client.close();
  }
}
