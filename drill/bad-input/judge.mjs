// What an answer to a bad-input case must not be. Answers the problems found, as short strings.
import { FormData } from 'undici';

/** Everything the request itself carried: an id the caller sent may be echoed back in an error message. */
function sentText(testCase) {
  const parts = [testCase.url];
  if (testCase.json !== undefined) parts.push(JSON.stringify(testCase.json));
  if (typeof testCase.body === 'string') parts.push(testCase.body);
  if (testCase.body instanceof FormData) for (const [, value] of testCase.body) if (typeof value === 'string') parts.push(value);
  return parts.join('\n');
}

/** The error body of each interface: problem details on /v1, the envelope on /api/external. */
function errorShapeProblem(testCase, response) {
  if (testCase.url.startsWith('/api/external')) {
    const ok = response.json?.success === false && typeof response.json.error === 'string';
    return ok ? null : 'error body is not the { success: false, error } envelope';
  }
  const ok = String(response.headers['content-type']).startsWith('application/problem+json') && response.json?.statusCode === response.status;
  return ok ? null : 'error body is not problem+json with its statusCode';
}

/** The most an error body may weigh, whatever the request (contract section 18). */
export const MAX_ERROR_BODY_BYTES = 10 * 1024;

/**
 * The bulk route (POST /v1/conversations/bulk) answers 200 with one result per id, each with the status its single
 * route would have answered: it refused the request when no result is ok (its items' highest status), accepted it
 * when one is. Other answers: their own status.
 */
function effectiveStatus(testCase, response) {
  const results = response.json?.results;
  if (!testCase.url.startsWith('/v1/conversations/bulk') || response.status !== 200 || !Array.isArray(results) || results.length === 0) return response.status;
  if (results.some((result) => result.ok === true)) return 200;
  return Math.max(...results.map((result) => (typeof result.status === 'number' ? result.status : 500)));
}

/**
 * `secrets`: strings of company B (its ids, names, credentials) that no answer to company A may contain unless
 * A sent them itself.
 */
export function judge(testCase, response, secrets) {
  const problems = [];
  const status = effectiveStatus(testCase, response);
  if (status >= 500) problems.push('server error');
  if (testCase.foreign && status >= 200 && status < 300) problems.push('cross-company: 2xx to a request aimed at company B');
  if (testCase.expect === 'refused' && status < 400) problems.push('accepted, the contract requires a 4xx');
  const sent = sentText(testCase);
  const leaked = secrets.filter((secret) => response.text.includes(secret) && !sent.includes(secret));
  if (leaked.length) problems.push(`cross-company read: the answer contains company B's ${leaked.join(', ')}`);
  // 431 comes from Node's HTTP parser (request line too long) before the application sees the request.
  if (response.status >= 400 && response.status !== 431) {
    const shape = errorShapeProblem(testCase, response);
    if (shape) problems.push(shape);
    const bytes = Buffer.byteLength(response.text);
    if (bytes > MAX_ERROR_BODY_BYTES) problems.push(`error body of ${bytes} bytes, over ${MAX_ERROR_BODY_BYTES}`);
  }
  return problems;
}
