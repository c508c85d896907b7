import type { HeaderObject, OpenAPIObject, OperationObject, ParameterObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger';
import { errorResponseOf, PROBLEM_MESSAGES } from './errors/api-error-responses.js';
import { isExternalApiPath } from './errors/interface-exception.filter.js';
import { DATABASE_UNAVAILABLE } from './errors/normalize-exception.js';
import { PARSED_BODY_TYPES } from './unread-body.guard.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

type Schema = SchemaObject | ReferenceObject;

/**
 * The null alternative of a nullable reference. OpenAPI 3.0 validators read `nullable` only beside a `type` in the same
 * schema, so `{ nullable: true, allOf: [$ref] }` (what Nest writes) means "never null" to Ajv or Prism: this one
 * admits exactly null.
 */
const NULL_ONLY: SchemaObject = { type: 'object', nullable: true, enum: [null] };

/**
 * Rewrites each nullable reference (`$ref` or a one-item `allOf` beside `nullable: true`) as `anyOf: [$ref, null]`,
 * and lists null among the values of a nullable enum.
 */
function strictNullables(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) strictNullables(item);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  const schema = node as Record<string, unknown>;
  if (schema.nullable === true) {
    const allOf = schema.allOf as Schema[] | undefined;
    const target = allOf?.length === 1 ? allOf[0] : typeof schema.$ref === 'string' ? { $ref: schema.$ref } : undefined;
    if (target) {
      delete schema.nullable;
      delete schema.allOf;
      delete schema.$ref;
      delete schema.type;
      schema.anyOf = [target, NULL_ONLY];
    }
    // OpenAPI 3.0.3: an enum limits a nullable schema too, so null must be one of its values.
    const values = schema.enum as unknown[] | undefined;
    if (values && !values.includes(null)) values.push(null);
  }
  for (const value of Object.values(schema)) strictNullables(value);
}

/** The headers the server sends, documented once and referenced by every answer that carries them. */
const HEADERS: Record<string, HeaderObject> = {
  XRequestId: { description: 'The request id: the one sent in `x-request-id`, else a new one. On every answer', schema: { type: 'string' } },
  WWWAuthenticate: {
    description: 'The scheme to authenticate with (RFC 9110), on every 401',
    schema: { type: 'string' },
    example: 'Bearer realm="parley"',
  },
  RetryAfter: { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 }, example: 42 },
  RateLimitLimit: { description: 'Requests allowed in the window (the limit closest to running out)', schema: { type: 'integer' }, example: 300 },
  RateLimitRemaining: { description: 'Requests left in the window', schema: { type: 'integer' }, example: 299 },
  RateLimitReset: { description: 'Seconds until the window ends', schema: { type: 'integer' }, example: 42 },
  RateLimitPolicy: {
    description: 'The limit and window (IETF draft RateLimit header fields)',
    schema: { type: 'string' },
    example: '"default";q=300;w=60',
  },
  RateLimit: {
    description: 'What is left of the limit (IETF draft RateLimit header fields)',
    schema: { type: 'string' },
    example: '"default";r=299;t=42',
  },
};

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

const RATE_LIMIT_HEADERS = {
  'X-RateLimit-Limit': ref('RateLimitLimit'),
  'X-RateLimit-Remaining': ref('RateLimitRemaining'),
  'X-RateLimit-Reset': ref('RateLimitReset'),
  'RateLimit-Policy': ref('RateLimitPolicy'),
  RateLimit: ref('RateLimit'),
};

function headersOf(status: string, authenticated: boolean): Record<string, ReferenceObject> {
  return {
    'x-request-id': ref('XRequestId'),
    ...(status === '401' ? { 'WWW-Authenticate': ref('WWWAuthenticate') } : {}),
    ...(status === '429' || status === '503' ? { 'Retry-After': ref('RetryAfter') } : {}),
    ...(authenticated || status === '429' ? RATE_LIMIT_HEADERS : {}),
  };
}

function resolve(document: OpenAPIObject, schema: Schema | undefined): SchemaObject | undefined {
  if (!schema) return undefined;
  if ('$ref' in schema) return document.components?.schemas?.[schema.$ref.split('/').pop()!] as SchemaObject | undefined;
  return schema;
}

/** What the validation says of `field` given the wrong kind of value: the 400 a route's own body or query gets. */
function refusalOf(document: OpenAPIObject, field: string, schema: Schema | undefined): string {
  const resolved = resolve(document, schema);
  if (resolved?.enum) return `${field} must be one of the following values: ${resolved.enum.join(', ')}`;
  switch (resolved?.type) {
    case 'integer':
      return `${field} must be an integer number`;
    case 'number':
      return `${field} must be a number conforming to the specified constraints`;
    case 'boolean':
      return `${field} must be a boolean value`;
    case 'array':
      return `${field} must be an array`;
    case 'object':
      return `${field} must be an object`;
    case 'string':
      return `${field} must be a string`;
    default:
      return `${field} is not valid`;
  }
}

/**
 * The 400 example of one operation, from its own request: the first required field of its JSON body (else its first
 * field), else its first query parameter, else the query parameter it does not take.
 */
function badRequestMessage(document: OpenAPIObject, operation: OperationObject): string {
  const body = operation.requestBody && !('$ref' in operation.requestBody) ? operation.requestBody.content : undefined;
  const bodySchema = resolve(document, body?.['application/json']?.schema);
  const properties = bodySchema?.properties ?? {};
  const field = bodySchema?.required?.[0] ?? Object.keys(properties)[0];
  if (field !== undefined) return refusalOf(document, field, properties[field]);
  const query = (operation.parameters ?? []).find((parameter): parameter is ParameterObject => !('$ref' in parameter) && parameter.in === 'query');
  if (query) return refusalOf(document, query.name, query.schema);
  return 'unknown is not a parameter of this query';
}

/** The generic 409 example, true of one route only, is replaced by what another route's conflict would be. */
const GENERIC_CONFLICT = PROBLEM_MESSAGES[409];
const GENERIC_BAD_REQUEST = PROBLEM_MESSAGES[400];
const CONTACT_PATHS = /^\/v1\/contacts(\/\{id\})?$/;

function exampleMessage(response: ResponseObject): string | undefined {
  const content = response.content?.['application/problem+json'] ?? response.content?.['application/json'];
  const example = content?.example as { detail?: string; error?: string } | undefined;
  return example?.detail ?? example?.error;
}

function conflictMessage(method: string, operation: OperationObject): string {
  if (method === 'post' && operation.security?.length) return 'A request with this Idempotency-Key is still being processed; retry later';
  return 'The record was changed by another request meanwhile; read it again and retry';
}

function documentOperation(document: OpenAPIObject, path: string, method: string, operation: OperationObject): void {
  const external = isExternalApiPath(path);
  const responses = operation.responses;
  const body = operation.requestBody && !('$ref' in operation.requestBody) ? operation.requestBody.content : undefined;
  if (body) {
    if (body['application/json'] && !responses['413']) {
      responses['413'] = errorResponseOf(external, 413, 'The JSON body is over the 1 MB limit', 'The request body is too large');
    }
    if (!responses['415']) {
      const reads = body['multipart/form-data'] ? ['multipart/form-data'] : [...PARSED_BODY_TYPES];
      responses['415'] = errorResponseOf(
        external,
        415,
        `A body in another type than ${reads.join(' or ')}, or without a Content-Type`,
        `The request body has Content-Type text/plain; this route reads ${reads.join(' or ')}`,
      );
    }
  }
  // Every route refuses the query parameters it does not read (QueryKeysGuard), those without a query DTO too.
  responses['400'] ??= errorResponseOf(
    external,
    400,
    'Invalid request: a query parameter the route does not take',
    badRequestMessage(document, operation),
  );
  // Any route may fail unexpectedly; its answer then says only this (InterfaceExceptionFilter).
  responses['500'] ??= errorResponseOf(external, 500, 'Internal server error', 'Internal server error');
  // Any route may find the database unreachable; the same request may then be sent again (normalizeException).
  responses['503'] ??= { $ref: `#/components/responses/${external ? 'ExternalDatabaseUnavailable' : 'DatabaseUnavailable'}` };
  for (const [status, response] of Object.entries(responses)) {
    if (!response || '$ref' in response) continue;
    let message = exampleMessage(response);
    if (status === '400' && message === GENERIC_BAD_REQUEST && !CONTACT_PATHS.test(path)) message = badRequestMessage(document, operation);
    else if (status === '409' && message === GENERIC_CONFLICT && !CONTACT_PATHS.test(path)) message = conflictMessage(method, operation);
    else message = undefined;
    // A controller's responses are one object shared by its operations: each gets its own copy.
    const own: ResponseObject =
      message === undefined ? { ...response } : { ...errorResponseOf(external, Number(status), response.description, message) };
    own.headers = { ...response.headers, ...headersOf(status, !!operation.security?.length) };
    responses[status] = own;
  }
}

/** The 503 any route answers while the database is unreachable, once per interface: every route refers to it. */
function databaseUnavailable(): Record<string, ResponseObject> {
  const description = 'The database is unreachable for now: send the same request again after Retry-After';
  const headers = { 'x-request-id': ref('XRequestId'), 'Retry-After': ref('RetryAfter') };
  return {
    DatabaseUnavailable: { ...errorResponseOf(false, 503, description, DATABASE_UNAVAILABLE), headers },
    ExternalDatabaseUnavailable: { ...errorResponseOf(true, 503, description, DATABASE_UNAVAILABLE), headers },
  };
}

/**
 * Makes the whole document hold under a strict OpenAPI 3.0 validator (Ajv, Prism), for every operation whatever its
 * controller declares: nullable references in a form validators read as nullable; 400, 500 and 503 on every route
 * (unknown query parameters, an unexpected failure, the database unreachable), 413 on every JSON body and 415 on
 * every body, in the interface's error shape; the headers the server sends (x-request-id on every answer,
 * WWW-Authenticate on 401, Retry-After on 429 and 503, the rate-limit headers); each operation's own 400 example,
 * from its own body or query, and a 409 example true of it rather than of contacts.
 */
export function documentStrictly(document: OpenAPIObject): OpenAPIObject {
  const components = (document.components ??= {});
  components.headers = { ...components.headers, ...HEADERS };
  components.responses = { ...components.responses, ...databaseUnavailable() };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) documentOperation(document, path, method, operation);
    }
  }
  strictNullables(document.paths);
  strictNullables(components.schemas);
  return document;
}
