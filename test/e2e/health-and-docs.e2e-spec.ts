import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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

/** Every route Express actually serves, from the router, minus the docs themselves. */
function collectRoutes(t: TestApp): string[] {
  const router = t.app.getHttpAdapter().getInstance().router as {
    stack: { route?: { path: string; methods: Record<string, boolean> } }[];
  };
  return router.stack
    // The docs themselves and Nest's catch-all `{/*splat}` routes (404s, version fallback) are not operations.
    .filter((layer) => layer.route && !layer.route.path.startsWith('/docs') && !layer.route.path.includes('*'))
    .flatMap((layer) =>
      Object.keys(layer.route!.methods).map(
        (method) => `${method.toUpperCase()} ${layer.route!.path.replace(/:(\w+)/g, '{$1}')}`,
      ),
    );
}
