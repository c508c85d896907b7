import { describe, expect, it } from '@jest/globals';
import {
  assignRequestId,
  incomingRequestId,
  isSafeRequestId,
  REQUEST_ID_HEADER,
  requestIdMiddleware,
  requestIdOf,
  type RequestWithId,
} from '../request-id.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

class FakeResponse {
  headersSent = false;
  readonly headers = new Map<string, string>();
  setHeader(name: string, value: string): void {
    this.headers.set(name, value);
  }
}

describe('request ids', () => {
  it('accepts short tokens of letters, digits and . _ : - only', () => {
    for (const id of ['a', 'req-1', 'trace:span.01_x', 'x'.repeat(128), '0b5a4c1e-7f2d-4c9a-9d1e-3a2b1c0d9e8f']) {
      expect(isSafeRequestId(id)).toBe(true);
    }
    for (const id of ['', 'x'.repeat(129), 'a b', 'a,b', 'a\nb', 'é', '<x>', 'a/b', undefined, ['a'], 42]) {
      expect(isSafeRequestId(id)).toBe(false);
    }
  });

  it('takes the caller\'s id when safe, otherwise a new UUID', () => {
    expect(incomingRequestId({ headers: { [REQUEST_ID_HEADER]: 'abc-1' } })).toBe('abc-1');
    expect(incomingRequestId({ headers: {} })).toMatch(UUID);
    expect(incomingRequestId({ headers: { [REQUEST_ID_HEADER]: 'two, ids' } })).toMatch(UUID);
  });

  it('requestIdOf answers the id the request has, and gives one, once, to a request without', () => {
    expect(requestIdOf({ headers: {}, id: 'given' })).toBe('given');
    const req: RequestWithId = { headers: {} };
    const id = requestIdOf(req);
    expect(id).toMatch(UUID);
    expect(req.id).toBe(id);
    expect(requestIdOf(req)).toBe(id);
    // pino-http's default numeric ids are not ours: replaced
    expect(requestIdOf({ headers: { [REQUEST_ID_HEADER]: 'sent' }, id: 7 })).toBe('sent');
  });

  it('assignRequestId keeps an existing id and echoes it unless the headers are gone', () => {
    const res = new FakeResponse();
    const req: RequestWithId = { headers: { [REQUEST_ID_HEADER]: 'from-caller' } };
    expect(assignRequestId(req, res)).toBe('from-caller');
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe('from-caller');
    req.headers[REQUEST_ID_HEADER] = 'changed';
    expect(assignRequestId(req, res)).toBe('from-caller');

    const sent = new FakeResponse();
    sent.headersSent = true;
    expect(assignRequestId({ headers: {} }, sent)).toMatch(UUID);
    expect(sent.headers.size).toBe(0);
  });

  it('requestIdMiddleware sets the id and the header, then calls next', () => {
    const res = new FakeResponse();
    const req: RequestWithId = { headers: {} };
    let called = 0;
    requestIdMiddleware(req, res, () => called++);
    expect(called).toBe(1);
    expect(req.id).toMatch(UUID);
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe(req.id);
  });
});
