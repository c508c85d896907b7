import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject, OperationObject } from '@nestjs/swagger';
import { Ajv, type ValidateFunction } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/swagger.js';

/** ajv-formats is CommonJS: under ESM its function is the default export, or that export's own default. */
type AddFormats = (ajv: Ajv) => Ajv;
const formatsExport = (ajvFormats as unknown as { default: AddFormats | { default: AddFormats } }).default;
const addFormats: AddFormats = typeof formatsExport === 'function' ? formatsExport : formatsExport.default;

/** One answer the document does not describe: where, and what differs. */
export interface ResponseMismatch {
  request: string;
  status: number;
  problem: string;
}

interface Route {
  pattern: RegExp;
  params: number;
  operation: OperationObject;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;
const DOCUMENT_ID = 'parley-openapi';

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Checks real answers against the OpenAPI document, strictly: the operation must exist, document the status and the
 * content type, and the body must validate against the schema (Ajv, the document's own component schemas, formats
 * checked, `nullable` read as OpenAPI 3.0 defines it). Streams (text/event-stream) and files are checked by type only.
 */
export class OpenApiResponseValidator {
  private readonly ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
  private readonly routes = new Map<string, Route[]>();
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(readonly document: OpenAPIObject) {
    addFormats(this.ajv);
    this.ajv.addFormat('binary', true);
    this.ajv.addSchema({ ...(document as object), $id: DOCUMENT_ID });
    for (const [path, item] of Object.entries(document.paths)) {
      for (const method of METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const source = path
          .split(/\{[^}]+\}/)
          .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
          .join('[^/]+');
        const routes = this.routes.get(method) ?? [];
        routes.push({ pattern: new RegExp(`^${source}$`), params: (path.match(/\{/g) ?? []).length, operation: { ...operation, operationId: path } });
        this.routes.set(method, routes);
      }
    }
    for (const routes of this.routes.values()) routes.sort((a, b) => a.params - b.params);
  }

  static forApp(app: INestApplication): OpenApiResponseValidator {
    return new OpenApiResponseValidator(buildOpenApiDocument(app));
  }

  /** The mismatches of one answer (none when the document describes it exactly); null for a route not in the document. */
  check(method: string, url: string, status: number, contentType: string | undefined, body: unknown): ResponseMismatch[] | null {
    const path = new URL(url, 'http://x').pathname;
    const route = this.routes.get(method.toLowerCase())?.find((candidate) => candidate.pattern.test(path));
    if (!route) return null;
    const request = `${method.toUpperCase()} ${path}`;
    const mismatch = (problem: string) => [{ request, status, problem }];
    const response = route.operation.responses[String(status)];
    if (!response) return mismatch(`status ${status} is not documented (documented: ${Object.keys(route.operation.responses).join(', ')})`);
    if ('$ref' in response) return [];
    const type = contentType?.split(';')[0]!.trim();
    if (!response.content || status === 204)
      return type && body !== undefined && body !== '' && status !== 204 && !response.content
        ? mismatch(`a ${type} body that is not documented`)
        : [];
    if (!type) return mismatch('no Content-Type');
    const media =
      response.content[type] ?? (type === 'application/json' ? undefined : Object.entries(response.content).find(([name]) => name === '*/*')?.[1]);
    if (!media) return mismatch(`Content-Type ${type} is not documented (documented: ${Object.keys(response.content).join(', ')})`);
    if (!type.endsWith('json') || !media.schema) return [];
    const pointer = ['paths', route.operation.operationId!, method.toLowerCase(), 'responses', String(status), 'content', type, 'schema']
      .map(escapePointer)
      .join('/');
    let validate = this.compiled.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#/${pointer}` });
      this.compiled.set(pointer, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? [])
      .slice(0, 5)
      .map((error) => ({ request, status, problem: `${error.instancePath || '(body)'} ${error.message ?? ''} ${JSON.stringify(error.params)}` }));
  }
}
