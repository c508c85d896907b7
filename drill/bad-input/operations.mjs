// The operations of both interfaces, read from the running app's OpenAPI document (/docs-json).

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** Follows `$ref` and single-entry `allOf` (how Nest's Swagger plugin wraps a described $ref) to the schema itself. */
export function resolver(document) {
  const resolve = (schema) => {
    if (!schema) return schema;
    if (schema.$ref) return resolve(document.components.schemas[schema.$ref.split('/').pop()]);
    if (schema.allOf?.length === 1) return { ...schema, ...resolve(schema.allOf[0]), allOf: undefined };
    return schema;
  };
  return resolve;
}

/**
 * `[{ method, path, auth: 'bearer' | 'api-key' | null, pathParams, queryParams, body: { contentType, schema } | null }]`
 * for every operation but /health.
 */
export function operationsOf(document) {
  const resolve = resolver(document);
  const operations = [];
  for (const [path, item] of Object.entries(document.paths)) {
    if (path === '/health') continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const security = Object.keys(operation.security?.[0] ?? {})[0] ?? null;
      const parameters = operation.parameters ?? [];
      const [contentType, content] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
      operations.push({
        method: method.toUpperCase(),
        path,
        auth: security === 'api-key' ? 'api-key' : security ? 'bearer' : null,
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: resolve(p.schema) })),
        body: contentType ? { contentType, schema: resolve(content.schema) } : null,
      });
    }
  }
  return operations;
}
