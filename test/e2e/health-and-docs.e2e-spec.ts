import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/project-root.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('health and API docs', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t.close());

  it('GET /health answers ok with the database up, without auth or rate-limit headers', async () => {
    const response = await t.http.get('/health').expect(200);
    expect(response.body).toEqual({ status: 'ok', database: 'up' });
    expect(response.headers).not.toHaveProperty('x-ratelimit-limit');
  });

  it('serves Swagger UI at /docs', async () => {
    const response = await t.http.get('/docs').redirects(1).expect(200);
    expect(response.text).toContain('swagger-ui');
  });

  it('/docs-json lists every route of the app with both security schemes', async () => {
    const { body: document } = await t.http.get('/docs-json').expect(200);
    expect(document.components.securitySchemes).toEqual({
      bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
      'api-key': { type: 'apiKey', in: 'header', name: 'x-api-key' },
    });
    const operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(
      ([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const routes = collectRoutes(t);
    expect(routes.length).toBeGreaterThan(5);
    expect(operations.sort()).toEqual(routes.sort());
  });

  it('names the server by the address the reader used, and its license by an SPDX reference with its text served', async () => {
    const { body: document } = await t.http.get('/docs-json').set('host', 'parley.example.test:8443').expect(200);
    expect(document.servers).toEqual([{ url: 'http://parley.example.test:8443', description: 'This server' }]);
    expect(document.info.license).toEqual({ name: 'Apache-2.0', url: '/docs/license' });
    expect(document.info.version).toBe(JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')).version);
    const license = await t.http.get('/docs/license').expect(200);
    expect(license.headers['content-type']).toMatch(/^text\/plain/);
    expect(license.text).toContain('Apache License\n                           Version 2.0, January 2004');
    // The UI is initialised with the same document.
    const init = await t.http.get('/docs/swagger-ui-init.js').set('host', 'parley.example.test:8443').expect(200);
    expect(init.text).toContain('"url": "http://parley.example.test:8443"');
  });

  it('documents error responses and request bodies', async () => {
    const { body: document } = await t.http.get('/docs-json').expect(200);
    const register = document.paths['/v1/auth/register'].post;
    expect(register.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/RegisterDto');
    expect(Object.keys(register.responses)).toEqual(expect.arrayContaining(['201', '400', '409', '429']));
    expect(document.components.schemas.ProblemDetailsDto.properties).toHaveProperty('requestId');
    const revoke = document.paths['/v1/api-keys/{id}'].delete;
    expect(revoke.security).toEqual([{ bearer: [] }]);
  });
});

describe('API docs for Swagger UI', () => {
  let t: TestApp;
  let document: {
    paths: Record<string, Record<string, Operation>>;
    tags: { name: string }[];
  };

  interface Operation {
    tags: string[];
    parameters?: { name: string; in: string; required: boolean; example?: unknown; schema: { example?: unknown } }[];
    responses: Record<string, { content?: Record<string, { example?: Record<string, unknown> }> }>;
  }

  beforeAll(async () => {
    t = await createTestApp();
    document = (await t.http.get('/docs-json').expect(200)).body;
  });
  afterAll(() => t.close());

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
    );

  it('pre-fills no optional query parameter, so that "Try it out" sends only what the user types', () => {
    const prefilled = operations().flatMap(({ name, operation }) =>
      (operation.parameters ?? [])
        .filter((p) => p.in === 'query' && !p.required && (p.example !== undefined || p.schema.example !== undefined))
        .map((p) => `${name} ?${p.name}`),
    );
    expect(prefilled).toEqual([]);
  });

  it('shows under each error status an example of that status, on both interfaces', () => {
    const mismatches = operations().flatMap(({ name, operation }) =>
      Object.entries(operation.responses)
        // Error bodies; /health's 503 answers its own HealthView.
        .filter(([status]) => Number(status) >= 400 && Number(status) <= 500)
        .flatMap(([status, response]) => {
          const [mediaType, content] = Object.entries(response.content ?? {})[0] ?? [];
          const example = content?.example;
          if (!example) return [`${name} ${status}: no example`];
          if (mediaType === 'application/problem+json') return example.status === Number(status) ? [] : [`${name} ${status}`];
          return example.success === false && (status === '404') === /not found/.test(String(example.error)) ? [] : [`${name} ${status}`];
        }),
    );
    expect(mismatches).toEqual([]);
    const conversation = document.paths['/v1/conversations/{id}'].get.responses;
    expect(conversation['401'].content!['application/problem+json'].example).toMatchObject({ status: 401, title: 'Unauthorized' });
    expect(conversation['404'].content!['application/problem+json'].example).toMatchObject({ status: 404, title: 'Not Found' });
  });

  it('lists POST /v1/conversations once, under Conversations, and declares every tag it uses', () => {
    expect(document.paths['/v1/conversations'].post.tags).toEqual(['Conversations']);
    const declared = document.tags.map((tag) => tag.name);
    const used = new Set(operations().flatMap(({ operation }) => operation.tags));
    expect([...used].filter((tag) => !declared.includes(tag))).toEqual([]);
  });
});

/** Every route Express actually serves, from the router, minus the docs themselves. */
function collectRoutes(t: TestApp): string[] {
  const router = t.app.getHttpAdapter().getInstance().router as {
    stack: { route?: { path: string; methods: Record<string, boolean> } }[];
  };
  return router.stack
    // The docs themselves, the operators' Prometheus metrics (docs/operations.md) and Nest's catch-all `{/*splat}`
    // routes (404s, version fallback) are not operations of the API.
    .filter((layer) => layer.route && !layer.route.path.startsWith('/docs') && layer.route.path !== '/metrics' && !layer.route.path.includes('*'))
    .flatMap((layer) =>
      Object.keys(layer.route!.methods).map(
        (method) => `${method.toUpperCase()} ${layer.route!.path.replace(/:(\w+)/g, '{$1}')}`,
      ),
    );
}
