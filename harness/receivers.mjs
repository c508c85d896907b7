// Webhook receivers on 127.0.0.1 for the benchmark's fan-out and the reliability drills, and the signature
// check a receiver does. Written from docs/webhooks.md, independent of the app's signer (src/webhooks/delivery).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { freePort } from './children.mjs';

/** How far (s) a signature's timestamp may be from its arrival. */
const TOLERANCE_SECONDS = 300;

/**
 * The Standard Webhooks check of docs/webhooks.md ("Verifying a signature"): HMAC-SHA256 of `<id>.<timestamp>.<body>`
 * under the decoded secret, with a timestamp within 300 s of the request's arrival `at` (ms).
 */
export function signatureValid(secret, { headers, body, at }) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) return false;
  if (Math.abs(at / 1000 - Number(timestamp)) > TOLERANCE_SECONDS) return false;
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((candidate) => {
    if (!candidate.startsWith('v1,')) return false;
    const given = Buffer.from(candidate.slice(3), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

/**
 * An HTTP server on 127.0.0.1 that hands every request, read whole, to `onRequest({ path, headers, body, at })`
 * (`body` as text, `at` its arrival in ms) and answers 200 after `delayMs`.
 */
async function listenForWebhooks(onRequest, delayMs = 0) {
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      onRequest({ path: req.url, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * The benchmark's receiver: answers 200 after `delayMs` and records, per distinct delivery (`webhook-id`),
 * when it arrived and how long after its event (the payload's timestamp). Every signature is checked once
 * the secret is known (`secret` is set after the webhook is registered).
 */
export class Receiver {
  constructor(name, delayMs = 0) {
    this.name = name;
    this.delayMs = delayMs;
    this.secret = null;
    this.reset();
  }

  reset() {
    this.deliveries = new Map();
    this.badSignatures = 0;
    this.attempts = 0;
  }

  async listen() {
    this.server = await listenForWebhooks((request) => this.record(request), this.delayMs);
    this.url = `${this.server.baseUrl}/hook`;
    return this;
  }

  record(request) {
    this.attempts += 1;
    if (!this.secret || !signatureValid(this.secret, request)) this.badSignatures += 1;
    const id = request.headers['webhook-id'];
    if (!this.deliveries.has(id)) {
      this.deliveries.set(id, { receivedAt: request.at, latencyMs: request.at - Date.parse(JSON.parse(request.body).timestamp) });
    }
  }

  close() {
    return this.server.close();
  }
}

/** The drills' receiver: keeps every request (`requests`, or those to one path with `to(path)`) and answers 200. */
export async function startReceiver() {
  const requests = [];
  const server = await listenForWebhooks((request) => requests.push(request));
  return {
    requests,
    url: (path) => server.baseUrl + path,
    to: (path) => requests.filter((request) => request.path === path),
    close: server.close,
  };
}

/** A URL on 127.0.0.1 where nothing listens: every attempt is a refused connection. */
export async function deadUrl() {
  return `http://127.0.0.1:${await freePort()}/hook`;
}
