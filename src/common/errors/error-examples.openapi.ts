import type { OpenAPIObject } from '@nestjs/swagger';
import { EXAMPLE_ID } from './api-error-responses.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

interface ExampleParameter {
  name?: string;
  in?: string;
  example?: unknown;
  schema?: { example?: unknown };
}

/** The path an operation's example request would call: each path parameter as its example, or the example id. */
function examplePath(path: string, parameters: ExampleParameter[]): string {
  return path.replace(/\{([^}]+)\}/g, (_whole, name: string) => {
    const parameter = parameters.find((candidate) => candidate.in === 'path' && candidate.name === name);
    const example = parameter?.example ?? parameter?.schema?.example;
    return typeof example === 'string' ? example : EXAMPLE_ID;
  });
}

/**
 * A problem details body names the path it answers (`instance`); the examples of ApiProblemResponses are written
 * once for every route, so each operation's examples get its own path here.
 */
export function documentErrorInstances(document: OpenAPIObject): OpenAPIObject {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const instance = examplePath(path, (operation.parameters ?? []) as ExampleParameter[]);
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!response || '$ref' in response) continue;
        const content = response.content?.['application/problem+json'];
        if (!content?.example || typeof content.example !== 'object') continue;
        // A controller's responses are one object shared by its operations: each gets its own copy.
        operation.responses[status] = {
          ...response,
          content: { ...response.content, 'application/problem+json': { ...content, example: { ...content.example, instance } } },
        };
      }
    }
  }
  return document;
}
