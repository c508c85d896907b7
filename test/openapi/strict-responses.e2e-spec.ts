import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenAPIObject, OperationObject, ReferenceObject, ResponseObject } from '@nestjs/swagger';
import { buildOpenApiDocument } from '../../src/swagger.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { OpenApiResponseValidator } from '../support/openapi-responses.js';
import { createTestApp, responseMismatches, type TestApp } from '../support/test-app.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

function operations(document: OpenAPIObject): Array<[string, string, OperationObject]> {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => [path, method, item[method]!] as [string, string, OperationObject]),
  );
}

function exampleMessage(response: ResponseObject): string | undefined {
  const content = response.content?.['application/problem+json'] ?? response.content?.['application/json'];
  const example = content?.example as { detail?: string; error?: string } | undefined;
  return example?.detail ?? example?.error;
}

/** Issue 41, finding 7: the document validates strictly, and real answers validate against it. */
describe('the OpenAPI document, read strictly', () => {
  let t: TestApp;
  let document: OpenAPIObject;
  let acme: TestCompany;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    document = buildOpenApiDocument(t.app);
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(() => t.close());

  it('writes no nullable beside a reference (validators read that as never null)', () => {
    const offenders: string[] = [];
    const walk = (node: unknown, at: string) => {
      if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${at}/${index}`));
      if (node === null || typeof node !== 'object') return;
      const schema = node as Record<string, unknown>;
      if (schema.nullable === true && (schema.allOf || schema.$ref)) offenders.push(at);
      if (schema.nullable === true && Array.isArray(schema.enum) && !schema.enum.includes(null)) offenders.push(at);
      for (const [key, value] of Object.entries(schema)) walk(value, `${at}/${key}`);
    };
    walk(document, '#');
    expect(offenders).toEqual([]);
    const conversation = document.components!.schemas!.ConversationView as { properties: Record<string, unknown> };
    expect(conversation.properties.contact).toMatchObject({
      anyOf: [{ $ref: '#/components/schemas/ContactSummaryView' }, { nullable: true, enum: [null] }],
    });
  });

  it('documents 413 and 415 on every body, 503 on every route, and the headers the server sends on every answer', () => {
    const missing: string[] = [];
    for (const [path, method, operation] of operations(document)) {
      const body = operation.requestBody && !('$ref' in operation.requestBody) ? operation.requestBody.content : undefined;
      if (body?.['application/json'] && !operation.responses['413']) missing.push(`${method} ${path}: 413`);
      if (body && !operation.responses['415']) missing.push(`${method} ${path}: 415`);
      if (!operation.responses['503']) missing.push(`${method} ${path}: 503`);
      for (const [status, given] of Object.entries(operation.responses) as Array<[string, ResponseObject | ReferenceObject]>) {
        const response = '$ref' in given ? (document.components!.responses![given.$ref.split('/').pop()!] as ResponseObject) : given;
        const headers = Object.keys(response.headers ?? {});
        if (!headers.includes('x-request-id')) missing.push(`${method} ${path} ${status}: x-request-id`);
        if (status === '401' && !headers.includes('WWW-Authenticate')) missing.push(`${method} ${path} 401: WWW-Authenticate`);
        if (status === '429' && !['Retry-After', 'RateLimit', 'X-RateLimit-Remaining'].every((name) => headers.includes(name))) {
          missing.push(`${method} ${path} 429: Retry-After and rate limits`);
        }
        if (status === '503' && !headers.includes('Retry-After')) missing.push(`${method} ${path} 503: Retry-After`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("gives each route its own 400 and 409 examples, not the contacts' ones", () => {
    const borrowed: string[] = [];
    const badRequests = new Set<string>();
    for (const [path, method, operation] of operations(document)) {
      if (path.startsWith('/v1/contacts')) continue;
      const badRequest = operation.responses['400'] as ResponseObject | undefined;
      const conflict = operation.responses['409'] as ResponseObject | undefined;
      if (badRequest) badRequests.add(exampleMessage(badRequest)!);
      if (
        badRequest &&
        exampleMessage(badRequest) === 'email must be an e-mail address' &&
        !path.startsWith('/v1/auth') &&
        !path.startsWith('/v1/agents')
      ) {
        borrowed.push(`${method} ${path} 400`);
      }
      if (conflict && exampleMessage(conflict) === 'A contact with this e-mail already exists') borrowed.push(`${method} ${path} 409`);
    }
    expect(borrowed).toEqual([]);
    expect(badRequests.size).toBeGreaterThan(20);
  });

  it('pre-fills send-message with a body the route accepts', async () => {
    const operation = document.paths['/v1/conversations/{id}/messages']!.post!;
    const body = operation.requestBody as { content: Record<string, { examples: Record<string, { value: object }> }> };
    const examples = body.content['application/json']!.examples;
    const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Grace' }).expect(201);
    const conversation = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id }).expect(201);
    const id = conversation.body.id as string;
    await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send(examples.text!.value).expect(201);
  });

  it('fails an answer that differs from the document', () => {
    const validator = new OpenApiResponseValidator(document);
    expect(validator.check('get', '/v1/agents/me', 200, 'application/json', { id: 42 })!.length).toBeGreaterThan(0);
    expect(validator.check('get', '/v1/agents/me', 418, 'application/json', {})).toEqual([
      expect.objectContaining({ problem: expect.stringContaining('status 418 is not documented') }),
    ]);
    expect(validator.check('get', '/v1/agents/me', 200, 'text/html', '<p>')).toEqual([
      expect.objectContaining({ problem: expect.stringContaining('text/html') }),
    ]);
    // A response every route refers to (the 503 of an unreachable database) is checked against the shared component:
    // a right body passes and one with a field of the wrong type fails on that field, on each interface.
    const fieldFails = (field: string) => expect.arrayContaining([expect.objectContaining({ problem: expect.stringContaining(`/${field} `) })]);
    const problem = (document.components!.responses!.DatabaseUnavailable as { content: Record<string, { example: object }> }).content[
      'application/problem+json'
    ]!.example;
    expect(validator.check('get', '/v1/agents/me', 503, 'application/problem+json', problem)).toEqual([]);
    expect(validator.check('get', '/v1/agents/me', 503, 'application/problem+json', { ...problem, status: 'down' })).toEqual(fieldFails('status'));
    const envelope = { success: false, error: 'The database is unavailable; try again shortly' };
    expect(validator.check('post', '/api/external/messages', 503, 'application/json', envelope)).toEqual([]);
    expect(validator.check('post', '/api/external/messages', 503, 'application/json', { ...envelope, success: 'no' })).toEqual(fieldFails('success'));
  });

  it('validates real answers of both interfaces, successes and errors, against the document', async () => {
    const key = await createApiKey(t.http, acme, ['messages:write', 'webhooks:manage', 'events:read', 'templates:manage']);
    const auth = acme.auth;
    // Interface A: records with nullable references (conversations, messages), lists, errors.
    const inbound = await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .send({ from: { phone: '+14155550177', name: 'Ada' }, text: 'Hello' })
      .expect(201);
    const conversationId = inbound.body.data.conversation.id as string;
    await t.http.get(`/v1/conversations/${conversationId}`).set(auth).expect(200);
    await t.http.get('/v1/conversations').set(auth).expect(200);
    await t.http.get(`/v1/conversations/${conversationId}/messages`).set(auth).expect(200);
    await t.http.post(`/v1/conversations/${conversationId}/assign`).set(auth).send({ agentId: acme.agentId }).expect(200);
    await t.http.post(`/v1/conversations/${conversationId}/messages`).set(auth).send({ text: 'Hi Ada' }).expect(201);
    await t.http.post(`/v1/conversations/${conversationId}/close`).set(auth).send({}).expect(200);
    await t.http.get('/v1/contacts').set(auth).expect(200);
    await t.http.post('/v1/contacts').set(auth).send({ email: 'not-an-email' }).expect(400);
    await t.http.get('/v1/agents/me').set(auth).expect(200);
    await t.http.get('/v1/agents/me').expect(401);
    await t.http.get('/v1/settings').set(auth).expect(200);
    await t.http.get('/v1/settings?unknown=1').set(auth).expect(400);
    await t.http.get('/v1/conversations/6650f0c2a1b2c3d4e5f60718').set(auth).expect(404);
    await t.http.get('/v1/events').set(auth).expect(200);
    await t.http.get('/v1/analytics/dashboard').set(auth).expect(200);
    const webhook = await t.http
      .post('/v1/webhooks')
      .set(auth)
      .send({ url: 'https://hooks.example.com/x', events: ['message.received'] })
      .expect(201);
    await t.http.get(`/v1/webhooks/${webhook.body.id}/deliveries`).set(auth).expect(200);
    await t.http.get('/health').expect(200);
    // Interface B.
    await t.http.get('/api/external/webhooks').set('x-api-key', key).expect(200);
    await t.http.get(`/api/external/webhooks/${webhook.body.id}`).set('x-api-key', key).expect(200);
    await t.http.get('/api/external/webhooks/wh_nope').set('x-api-key', key).expect(404);
    await t.http.get('/api/external/events').set('x-api-key', key).expect(200);
    await t.http.get('/api/external/message-templates').set('x-api-key', key).expect(200);
    await t.http.post('/api/external/messages').set('x-api-key', key).send({ from: {}, text: 'x' }).expect(400);
    await t.http.get('/api/external/webhooks').expect(401);
    expect(responseMismatches()).toEqual([]);
  });
});
