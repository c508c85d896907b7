import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { OpenAPIObject } from '@nestjs/swagger';
import { API_KEY_SCOPES } from '../../src/auth/auth-principal.js';
import { ApiKey } from '../../src/api-keys/api-key.schema.js';
import { EXAMPLE_ID } from '../../src/common/errors/api-error-responses.js';
import { DemoSeedService } from '../../src/seed/demo-seed.service.js';
import { buildOpenApiDocument } from '../../src/swagger.js';
import { addAgent, createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * Every 401, 403, 404 and 429 the OpenAPI document shows is what the route really answers in that case: the cases
 * come from the document (each operation, each of those statuses it documents), each is provoked on the real route,
 * and the example's `message` and `instance` (Interface A) or `error` (Interface B) must be the answer's.
 */

type Json = Record<string, any>;
type Credential = 'bearer' | 'api-key' | 'none';

interface Operation {
  name: string;
  method: string;
  path: string;
  operation: Json;
  credential: Credential;
}

const CHECKED_STATUSES = ['401', '403', '404', '429'];

function operationsOf(document: OpenAPIObject): Operation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, operation]: [string, Json]) => {
      const schemes = (operation.security ?? []).flatMap((requirement: Json) => Object.keys(requirement));
      const credential: Credential = schemes.includes('bearer') ? 'bearer' : schemes.includes('api-key') ? 'api-key' : 'none';
      return { name: `${method.toUpperCase()} ${path}`, method, path, operation, credential };
    }),
  );
}

/** The path "Try it out" would call: each path parameter's example, or the example id the error examples name. */
function examplePath({ path, operation }: Operation, ids: Record<string, string> = {}): string {
  return path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const parameter = (operation.parameters ?? []).find((candidate: Json) => candidate.in === 'path' && candidate.name === name);
    return ids[name] ?? parameter?.example ?? parameter?.schema?.example ?? EXAMPLE_ID;
  });
}

/** A body built from the document as Swagger UI does: required properties, each its example (or enum's first value). */
function sampleOf(schema: Json | undefined, document: OpenAPIObject): unknown {
  if (!schema) return undefined;
  if (schema.$ref) return sampleOf(document.components!.schemas![String(schema.$ref).split('/').pop()!] as Json, document);
  if (schema.allOf) return sampleOf(schema.allOf[0], document);
  if (schema.example !== undefined) return schema.example;
  if (schema.enum) return schema.enum[0];
  if (schema.type === 'object' || schema.properties) {
    return Object.fromEntries((schema.required ?? []).map((name: string) => [name, sampleOf(schema.properties[name], document)]));
  }
  if (schema.type === 'array') return [sampleOf(schema.items, document)];
  return { string: 'x', integer: 1, number: 1, boolean: true }[schema.type as string];
}

function exampleOf(operation: Operation, status: string): Json {
  const content = Object.values(operation.operation.responses[status].content ?? {})[0] as Json | undefined;
  expect({ operation: operation.name, status, example: content?.example }).toEqual({ operation: operation.name, status, example: expect.any(Object) });
  return content!.example;
}

/** What a client reads in an error body; the seconds to wait differ from run to run. */
function told(body: Json, external: boolean): Json {
  const seconds = (text: unknown) => (typeof text === 'string' ? text.replace(/retry after \d+ seconds?/, 'retry after N seconds') : text);
  return external ? { error: seconds(body.error) } : { message: seconds(body.message), instance: body.instance };
}

async function expectAnswerLikeExample(
  t: TestApp,
  document: OpenAPIObject,
  op: Operation,
  status: string,
  headers: Record<string, string>,
  ids?: Record<string, string>,
  sent?: object,
) {
  const requestBody = op.operation.requestBody?.content?.['application/json']?.schema;
  let request = (t.http as unknown as Record<string, (url: string) => any>)[op.method](examplePath(op, ids)).set(headers).timeout(10_000);
  if (requestBody) request = request.send(sent ?? (sampleOf(requestBody, document) as object));
  const response = await request;
  const external = op.path.startsWith('/api/external');
  // A case that needs a real record in the path names it where the example names the example id.
  const body = ids ? { ...response.body, instance: response.body.instance?.replace(examplePath(op, ids), examplePath(op)) } : response.body;
  expect({ case: `${op.name} ${status}`, status: String(response.status), told: told(body, external) }).toEqual({
    case: `${op.name} ${status}`,
    status,
    told: told(exampleOf(op, status), external),
  });
}

const documented = (document: OpenAPIObject, status: string) => operationsOf(document).filter((op) => op.operation.responses[status]);

describe('the error examples of the OpenAPI document are what the routes answer', () => {
  let t: TestApp;
  let document: OpenAPIObject;
  let acme: TestCompany;
  let agentAuth: Record<string, string>;
  let fullKey: string;
  let keyWithoutScopes: string;

  beforeAll(async () => {
    // Each 401 below is a failed authentication of this address: many more than the default limit allows.
    t = await createTestApp({ env: { AUTH_FAILURE_LIMIT: '1000' } });
    document = buildOpenApiDocument(t.app);
    acme = await registerCompany(t.http, 'Acme');
    agentAuth = (await addAgent(t, acme, 'agent')).auth;
    fullKey = await createApiKey(t.http, acme, [...API_KEY_SCOPES]);
    // The least a key can hold: no scope at all (the API asks for one; stored directly, before its first use).
    keyWithoutScopes = await createApiKey(t.http, acme, ['events:read']);
    await t.model<ApiKey>(ApiKey.name).updateOne({ companyId: acme.companyId, name: 'test key', scopes: ['events:read'] }, { $set: { scopes: [] } });
  });
  afterAll(() => t.close());

  it('documents these statuses on both interfaces', () => {
    const external = (status: string) => documented(document, status).filter((op) => op.path.startsWith('/api/external')).length;
    const internal = (status: string) => documented(document, status).filter((op) => op.path.startsWith('/v1')).length;
    for (const status of CHECKED_STATUSES) expect({ status, external: external(status) > 0, internal: internal(status) > 0 }).toEqual({ status, external: true, internal: true });
  });

  it('401: without a credential (login: with a wrong password)', async () => {
    for (const op of documented(document, '401')) await expectAnswerLikeExample(t, document, op, '401', {});
  });

  it('403: with the least credential, an agent of role agent or a key without scopes', async () => {
    // Changing another agent, or a company view, is what an agent may not do there; the example's unknown id would
    // answer 404 first.
    const companyView = (
      await t.http
        .post('/v1/views')
        .set(acme.auth)
        .send({ name: 'Queued', model: 'conversation', visibility: 'company', filter: { field: 'status', op: 'eq', value: 'queued' } })
        .expect(201)
    ).body.id as string;
    // A conversation assigned to the admin: an agent may not transfer it.
    const contactId = (await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Ada' }).expect(201)).body.id as string;
    const assigned = (await t.http.post('/v1/conversations').set(acme.auth).send({ contactId }).expect(201)).body.id as string;
    await t.http.post(`/v1/conversations/${assigned}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
    const ids: Record<string, Record<string, string>> = {
      'PATCH /v1/agents/{id}': { id: acme.agentId },
      'POST /v1/conversations/{id}/transfer': { id: assigned },
      'PATCH /v1/views/{id}': { id: companyView },
      'DELETE /v1/views/{id}': { id: companyView },
    };
    // An agent may change a contact, but not its legal hold; it may save private views, but not the company's.
    const bodies: Record<string, object> = {
      'PATCH /v1/contacts/{id}': { legalHold: true },
      'POST /v1/conversations/{id}/transfer': { teamId: '6650f0c2a1b2c3d4e5f60718' },
      'POST /v1/views': { name: 'Waiting', model: 'conversation', visibility: 'company', filter: { field: 'status', op: 'eq', value: 'queued' } },
    };
    const operations = documented(document, '403').filter((op) => op.credential !== 'none');
    expect(operations.length).toBeGreaterThan(10);
    for (const op of operations) {
      const headers = op.credential === 'bearer' ? agentAuth : { 'x-api-key': keyWithoutScopes };
      await expectAnswerLikeExample(t, document, op, '403', headers, ids[op.name], bodies[op.name]);
    }
  });

  it('404: the example ids, which name nothing, with every permission', async () => {
    // A signed link's 404 needs a valid link to a record removed since (its own tests make one): an example token is
    // no valid link, and answers its 403.
    // A transfer names its target; the sample body would name both or neither (400 first).
    const bodies: Record<string, object> = { 'POST /v1/conversations/{id}/transfer': { teamId: '6650f0c2a1b2c3d4e5f60718' } };
    for (const op of documented(document, '404').filter((candidate) => !candidate.path.includes('{token}'))) {
      await expectAnswerLikeExample(t, document, op, '404', op.credential === 'bearer' ? acme.auth : { 'x-api-key': fullKey }, undefined, bodies[op.name]);
    }
  });
});

describe('the 429 examples, and the 403 of a disabled registration, are what the routes answer', () => {
  let t: TestApp;
  let document: OpenAPIObject;

  beforeAll(async () => {
    // A window far longer than the test, so that no count starts again in the middle of it. Registration weighs 10:
    // the limit leaves room for the two other public 403s (a signed media link, a signed export link) of the address.
    t = await createTestApp({ env: { THROTTLE_LIMIT: '12', THROTTLE_TTL_MS: String(30 * 24 * 3600 * 1000), ALLOW_REGISTRATION: 'false', DEMO_SEED: 'true' } });
    document = buildOpenApiDocument(t.app);
  });
  afterAll(() => t.close());

  it('403 of the public routes, then 429 of every route once its caller is over the limit', async () => {
    for (const op of documented(document, '403').filter((candidate) => candidate.credential === 'none')) {
      await expectAnswerLikeExample(t, document, op, '403', {});
    }

    // Registration is off: the demo company (an admin and a key with every scope) is the tenant.
    const demo = (await t.app.get(DemoSeedService).seed())!;
    const credentials = { bearer: { Authorization: `Bearer ${demo.accessToken}` }, 'api-key': { 'x-api-key': demo.apiKey! }, none: {} };
    const exhaust = async (send: () => Promise<{ status: number }>) => {
      for (let attempt = 0; attempt < 20; attempt++) if ((await send()).status === 429) return;
      throw new Error('the limit was never reached');
    };
    await exhaust(() => t.http.get('/v1/settings').set(credentials.bearer));
    await exhaust(() => t.http.get('/api/external/events').set(credentials['api-key']));
    await exhaust(() => t.http.post('/v1/auth/login').send({ email: 'nobody@example.test', password: 'not the password' }));

    const operations = documented(document, '429');
    expect(operations.length).toBeGreaterThan(40);
    for (const op of operations) await expectAnswerLikeExample(t, document, op, '429', credentials[op.credential]);
  });
});
