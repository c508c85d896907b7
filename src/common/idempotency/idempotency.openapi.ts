import type { OpenAPIObject, OperationObject } from '@nestjs/swagger';
import { errorResponseOf } from '../errors/api-error-responses.js';
import { isExternalApiPath } from '../errors/interface-exception.filter.js';
import { IDEMPOTENT_REPLAYED_HEADER } from './idempotency-key.js';
import { RUNNING_LEASE_MS } from './idempotency.service.js';

const PARAMETER = 'IdempotencyKey';

const DESCRIPTION = `
Makes this POST safe to retry (IETF draft-ietf-httpapi-idempotency-key-header, as Stripe does it): 1 to 255
visible ASCII characters, e.g. a UUID (the draft's quoted form \`"..."\` is the same key). The first request
with a key runs; its answer (status, body, \`Content-Type\`, \`Location\`, \`Cache-Control\`) is kept for your
company, the caller (the agent of the bearer token, or the API key) and the key and route, 24 hours by default
(\`IDEMPOTENCY_TTL_HOURS\`): another agent or API key sending the same key makes a new request. A repeat with the same key,
route and body changes nothing and gets the kept answer again, byte for byte, with
\`${IDEMPOTENT_REPLAYED_HEADER}: true\` (and its own \`x-request-id\`); error answers below 500 are kept too.
The same key with another body or route answers 422; while the first request still runs, 409 (retry later: a
request whose process died holds its key ${RUNNING_LEASE_MS / 1000} s at most). Answers of 500 or more are not
kept, so a retry runs again. JSON bodies are compared by content (key order and whitespace do not count),
multipart bodies by their fields and the SHA-256 of their files (not the boundary). \`POST /v1/auth/login\`
and \`/v1/auth/register\` ignore it.
`.trim();

/**
 * What each error status adds for a request with the header: a phrase, to follow another description or begin
 * one, and the message of its example when the operation had no such answer documented.
 */
const ERRORS: Array<[status: string, phrase: string, example: string]> = [
  ['400', 'a malformed Idempotency-Key', 'Idempotency-Key must be 1 to 255 visible ASCII characters'],
  ['409', 'a request with the same Idempotency-Key is still being processed (retry later)', 'A request with this Idempotency-Key is still being processed; retry later'],
  ['422', 'the Idempotency-Key was used with another body or route', 'This Idempotency-Key was used with another request body or route'],
];


function documentOperation(path: string, operation: OperationObject): void {
  operation.parameters = [...(operation.parameters ?? []), { $ref: `#/components/parameters/${PARAMETER}` }];
  for (const [status, response] of Object.entries(operation.responses)) {
    if (status.startsWith('2') && response && !('$ref' in response)) {
      response.headers = { ...response.headers, [IDEMPOTENT_REPLAYED_HEADER]: { $ref: `#/components/headers/${PARAMETER}Replayed` } };
    }
  }
  for (const [status, phrase, example] of ERRORS) {
    const documented = operation.responses[status];
    operation.responses[status] =
      documented && !('$ref' in documented)
        ? { ...documented, description: `${documented.description}; or ${phrase}` }
        : errorResponseOf(isExternalApiPath(path), Number(status), phrase[0].toUpperCase() + phrase.slice(1), example);
  }
}

/**
 * Documents `Idempotency-Key` once for the whole document: a reusable header parameter referenced by every
 * authenticated POST of both interfaces, the `Idempotent-Replayed` answer header, and the 400, 409 and 422
 * answers in each interface's error shape. Public POSTs (login, register) ignore the header.
 */
export function documentIdempotency(document: OpenAPIObject): OpenAPIObject {
  const components = (document.components ??= {});
  components.parameters = {
    ...components.parameters,
    [PARAMETER]: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: DESCRIPTION,
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[!-~]+$' },
      example: '8e03978e-40d5-43e8-bc93-6894a57f9324',
    },
  };
  components.headers = {
    ...components.headers,
    [`${PARAMETER}Replayed`]: {
      description: 'Present, `true`, when this is the kept answer of an earlier request with the same Idempotency-Key',
      schema: { type: 'string', enum: ['true'] },
    },
  };
  for (const [path, item] of Object.entries(document.paths)) {
    if (item.post?.security?.length) documentOperation(path, item.post);
  }
  return document;
}
