// A small HTTP client for the drills, on undici: raw bodies allowed (malformed JSON), no redirects, no retries.
import { Agent, request } from 'undici';

const REQUEST_TIMEOUT_MS = 30_000;

/**
 * `call(method, path, options)` answers `{ status, headers, text, json }`; `json` is undefined unless the body parses.
 * options: `token` (bearer), `apiKey` (x-api-key), `json` (serialized), `body` + `contentType` (raw), `headers`.
 */
export function apiClient(baseUrl, { connections = 32 } = {}) {
  const dispatcher = new Agent({ connections, headersTimeout: REQUEST_TIMEOUT_MS, bodyTimeout: REQUEST_TIMEOUT_MS });

  async function call(method, path, { token, apiKey, json, body, contentType, headers = {} } = {}) {
    const sent = { ...headers };
    if (token) sent.authorization = `Bearer ${token}`;
    if (apiKey) sent['x-api-key'] = apiKey;
    if (json !== undefined) {
      body = JSON.stringify(json);
      contentType ??= 'application/json';
    }
    if (contentType) sent['content-type'] = contentType;
    const response = await request(baseUrl + path, { method, headers: sent, body, dispatcher });
    const text = await response.body.text();
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.statusCode, headers: response.headers, text, json: parsed };
  }

  /** Like `call`, but fails unless the answer is `expected`; answers the parsed body. */
  async function expect(expected, method, path, options) {
    const response = await call(method, path, options);
    if (response.status !== expected) {
      throw new Error(`${method} ${path}: expected ${expected}, got ${response.status} ${response.text.slice(0, 500)}`);
    }
    return response.json;
  }

  return { call, expect, close: () => dispatcher.close() };
}
