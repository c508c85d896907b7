import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject, OperationObject, ResponseObject } from '@nestjs/swagger';
import { Ajv, type ValidateFunction } from 'ajv';
import * as ajvFormats from 'ajv-formats';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PROJECT_ROOT } from '../../src/config/project-root.js';
import { customStepDtos } from '../../src/flows/steps/flow-step-definition.decorator.js';
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

/** Where the document of an app with nothing added is kept between test files and runs (see `forApp`). */
const DOCUMENT_CACHE = join(PROJECT_ROOT, 'node_modules', '.cache', 'parley', 'openapi-document.json');

/**
 * What that document is built from: every source file (path, size, last change), the installed packages, and the
 * custom flow step types the test file's imports registered.
 */
function sourcesKey(): string {
  const hash = createHash('sha256');
  const files = readdirSync(join(PROJECT_ROOT, 'src'), { recursive: true, encoding: 'utf8' }).map((path) => join('src', path));
  for (const path of [...files.sort(), 'package.json', 'package-lock.json']) {
    const { size, mtimeMs } = statSync(join(PROJECT_ROOT, path));
    hash.update(`${path} ${size} ${mtimeMs}\n`);
  }
  hash.update(
    customStepDtos()
      .map((dto) => dto.name)
      .join(),
  );
  return hash.digest('hex');
}

function cachedDocument(key: string): OpenAPIObject | undefined {
  try {
    const cached = JSON.parse(readFileSync(DOCUMENT_CACHE, 'utf8')) as { key: string; document: OpenAPIObject };
    return cached.key === key ? cached.document : undefined;
  } catch {
    return undefined;
  }
}

/** Written aside and renamed, so that a file that reads it while another writes it never sees half of it. */
function cacheDocument(key: string, document: OpenAPIObject): void {
  mkdirSync(dirname(DOCUMENT_CACHE), { recursive: true });
  const aside = `${DOCUMENT_CACHE}.${process.pid}`;
  writeFileSync(aside, JSON.stringify({ key, document }));
  renameSync(aside, DOCUMENT_CACHE);
}

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
    // Not checked against the JSON Schema meta-schema: the document is not a schema (its schemas sit under keys the
    // meta-schema does not know, so it would look at none of them); each one compiles as it is first used.
    this.ajv.addSchema({ ...(document as object), $id: DOCUMENT_ID }, undefined, undefined, false);
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

  /**
   * The validator of the app's document. Nest takes a second or more to build it (it reads every controller), in
   * every test file, so the document of an app with nothing added (`plain`: no test controllers or modules) is kept
   * on disk while the sources it is built from are unchanged.
   */
  static forApp(app: INestApplication, plain: boolean): OpenApiResponseValidator {
    if (!plain) return new OpenApiResponseValidator(buildOpenApiDocument(app));
    const key = sourcesKey();
    let document = cachedDocument(key);
    if (!document) {
      document = buildOpenApiDocument(app);
      cacheDocument(key, document);
    }
    return new OpenApiResponseValidator(document);
  }

  /** The mismatches of one answer (none when the document describes it exactly); null for a route not in the document. */
  check(method: string, url: string, status: number, contentType: string | undefined, body: unknown): ResponseMismatch[] | null {
    const path = new URL(url, 'http://x').pathname;
    const route = this.routes.get(method.toLowerCase())?.find((candidate) => candidate.pattern.test(path));
    if (!route) return null;
    const request = `${method.toUpperCase()} ${path}`;
    const mismatch = (problem: string) => [{ request, status, problem }];
    const given = route.operation.responses[String(status)];
    if (!given) return mismatch(`status ${status} is not documented (documented: ${Object.keys(route.operation.responses).join(', ')})`);
    // A response shared by every route (the 503 of an unreachable database) is a component the route refers to.
    const shared = '$ref' in given ? given.$ref.split('/').pop()! : undefined;
    const response = shared === undefined ? (given as ResponseObject) : (this.document.components?.responses?.[shared] as ResponseObject | undefined);
    if (!response) return mismatch(`status ${status} refers to a response the document does not have`);
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
    const where =
      shared === undefined
        ? ['paths', route.operation.operationId!, method.toLowerCase(), 'responses', String(status)]
        : ['components', 'responses', shared];
    const pointer = [...where, 'content', type, 'schema'].map(escapePointer).join('/');
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
