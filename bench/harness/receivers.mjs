import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { freePort } from './children.mjs';

/** The README's Standard Webhooks check: HMAC-SHA256 of `<id>.<timestamp>.<body>` under the decoded secret. */
export function signatureIsValid(secret, headers, rawBody) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${rawBody}`;
  const expected = createHmac('sha256', key).update(signed).digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((candidate) => {
      const given = Buffer.from(candidate.replace(/^v1,/, ''), 'base64');
      return candidate.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

/**
 * A webhook receiver on 127.0.0.1 that answers 200 after `delayMs` and records, per distinct delivery
 * (`webhook-id`), when it arrived and how long after its event (the payload's timestamp). Every
 * signature is checked once the secret is known (`secret` is set after the webhook is registered).
 */
export class Receiver {
  constructor(name, delayMs = 0) {
    this.name = name;
    this.delayMs = delayMs;
    this.secret = null;
    this.reset();
    this.server = createServer((req, res) => this.handle(req, res));
  }

  reset() {
    this.deliveries = new Map();
    this.badSignatures = 0;
    this.attempts = 0;
  }

  async listen() {
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${this.server.address().port}/hook`;
    return this;
  }

  handle(req, res) {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const receivedAt = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      this.attempts += 1;
      if (!this.secret || !signatureIsValid(this.secret, req.headers, body)) this.badSignatures += 1;
      const id = req.headers['webhook-id'];
      if (!this.deliveries.has(id)) {
        this.deliveries.set(id, { receivedAt, latencyMs: receivedAt - Date.parse(JSON.parse(body).timestamp) });
      }
      const answer = () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      if (this.delayMs > 0) setTimeout(answer, this.delayMs);
      else answer();
    });
  }

  async close() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** A URL on 127.0.0.1 where nothing listens: every attempt is a refused connection. */
export async function deadUrl() {
  return `http://127.0.0.1:${await freePort()}/hook`;
}
