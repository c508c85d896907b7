/**
 * `$jsonSchema` (query operator and collection validator) with MongoDB's dialect of JSON Schema draft 4: `bsonType`
 * and `type`, `required`, `properties`, `patternProperties`, `additionalProperties`, `enum`, numeric and length
 * bounds, `pattern`, `items`/`additionalItems`, `uniqueItems`, `minProperties`/`maxProperties`, `dependencies`,
 * `allOf`/`anyOf`/`oneOf`/`not`. Unknown keywords are refused when the schema is compiled, as MongoDB does.
 */
import type { Document } from 'bson';
import { compareBson, isPlainObject, toNumber, typeRank } from '../bson-values.js';
import { failedToParse } from '../errors.js';
import { bsonTypeName } from './bson-operators.js';
import { guardedRegex } from './guard.js';

/** Schema patterns as GuardedRegExps (guard.ts): a command can cut their executions short. */
const schemaRegex = (pattern: string) => guardedRegex(pattern, 'u');

const KEYWORDS = new Set([
  'bsonType', 'type', 'enum', 'required', 'properties', 'additionalProperties', 'patternProperties', 'minProperties',
  'maxProperties', 'items', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems', 'minimum', 'maximum',
  'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'pattern', 'allOf', 'anyOf', 'oneOf',
  'not', 'dependencies', 'title', 'description', 'encrypt',
]);

const JSON_TYPES: Record<string, (v: unknown) => boolean> = {
  object: (v) => isPlainObject(v),
  array: Array.isArray,
  number: (v) => typeRank(v) === 3,
  boolean: (v) => typeof v === 'boolean',
  string: (v) => typeof v === 'string',
  null: (v) => v === null,
};

function hasBsonType(v: unknown, t: string): boolean {
  if (t === 'number') return typeRank(v) === 3;
  if (t === 'object') return isPlainObject(v);
  return bsonTypeName(v) === t;
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

/** Checks the schema's keywords (recursively); throws FailedToParse for what MongoDB does not accept. */
export function checkSchema(schema: unknown, path = '$jsonSchema'): void {
  if (!isPlainObject(schema)) throw failedToParse(`${path} must be an object`);
  for (const [k, v] of Object.entries(schema)) {
    if (!KEYWORDS.has(k)) throw failedToParse(`Unknown $jsonSchema keyword: ${k}`);
    if (k === 'type' && list(v).some((t) => !(String(t) in JSON_TYPES))) throw failedToParse(`Unknown type name alias: ${String(v)}`);
    if (k === 'properties' || k === 'patternProperties') for (const [p, sub] of Object.entries(v as Document)) checkSchema(sub, `${path}.${k}.${p}`);
    if ((k === 'items' || k === 'additionalItems' || k === 'additionalProperties') && isPlainObject(v)) checkSchema(v, `${path}.${k}`);
    if (k === 'items' && Array.isArray(v)) v.forEach((sub, i) => checkSchema(sub, `${path}.items.${i}`));
    if (k === 'allOf' || k === 'anyOf' || k === 'oneOf') list(v).forEach((sub, i) => checkSchema(sub, `${path}.${k}.${i}`));
    if (k === 'not') checkSchema(v, `${path}.not`);
  }
}

/** Why `value` does not satisfy `schema` (empty when it does). */
export function schemaFailures(schema: Document, value: unknown, path = ''): string[] {
  const out: string[] = [];
  const at = path || 'document';
  const fail = (rule: string) => out.push(`${at}: ${rule}`);
  const isNum = typeRank(value) === 3;
  const n = isNum ? toNumber(value) : Number.NaN;
  for (const [k, spec] of Object.entries(schema)) {
    switch (k) {
      case 'bsonType':
        if (!list(spec).some((t) => hasBsonType(value, String(t)))) fail(`bsonType ${JSON.stringify(spec)}`);
        break;
      case 'type':
        if (!list(spec).some((t) => JSON_TYPES[String(t)](value))) fail(`type ${JSON.stringify(spec)}`);
        break;
      case 'enum':
        if (!(spec as unknown[]).some((e) => compareBson(e, value) === 0 && typeRank(e) === typeRank(value))) fail('enum');
        break;
      case 'minimum':
      case 'maximum': {
        if (!isNum) break;
        const limit = toNumber(spec);
        const exclusive = schema[k === 'minimum' ? 'exclusiveMinimum' : 'exclusiveMaximum'] === true;
        const ok = k === 'minimum' ? (exclusive ? n > limit : n >= limit) : exclusive ? n < limit : n <= limit;
        if (!ok) fail(`${k} ${limit}`);
        break;
      }
      case 'multipleOf':
        if (isNum && n % toNumber(spec) !== 0) fail(`multipleOf ${String(spec)}`);
        break;
      case 'minLength':
      case 'maxLength':
        if (typeof value === 'string' && (k === 'minLength' ? [...value].length < toNumber(spec) : [...value].length > toNumber(spec))) fail(`${k} ${String(spec)}`);
        break;
      case 'pattern':
        if (typeof value === 'string' && !schemaRegex(String(spec)).test(value)) fail(`pattern ${String(spec)}`);
        break;
      case 'minItems':
      case 'maxItems':
        if (Array.isArray(value) && (k === 'minItems' ? value.length < toNumber(spec) : value.length > toNumber(spec))) fail(`${k} ${String(spec)}`);
        break;
      case 'uniqueItems':
        if (spec === true && Array.isArray(value) && value.some((v, i) => value.findIndex((w) => compareBson(v, w) === 0) !== i)) fail('uniqueItems');
        break;
      case 'items':
        if (!Array.isArray(value)) break;
        if (isPlainObject(spec)) value.forEach((v, i) => out.push(...schemaFailures(spec, v, `${at}.${i}`)));
        else if (Array.isArray(spec)) {
          spec.forEach((sub, i) => i < value.length && out.push(...schemaFailures(sub as Document, value[i], `${at}.${i}`)));
          const extra = schema.additionalItems;
          if (extra === false && value.length > spec.length) fail('additionalItems');
          if (isPlainObject(extra)) value.slice(spec.length).forEach((v, i) => out.push(...schemaFailures(extra, v, `${at}.${spec.length + i}`)));
        }
        break;
      case 'allOf':
        for (const sub of spec as Document[]) out.push(...schemaFailures(sub, value, path));
        break;
      case 'anyOf':
        if (!(spec as Document[]).some((sub) => schemaFailures(sub, value, path).length === 0)) fail('anyOf');
        break;
      case 'oneOf':
        if ((spec as Document[]).filter((sub) => schemaFailures(sub, value, path).length === 0).length !== 1) fail('oneOf');
        break;
      case 'not':
        if (schemaFailures(spec as Document, value, path).length === 0) fail('not');
        break;
    }
  }
  if (isPlainObject(value)) out.push(...objectFailures(schema, value, at, path));
  return out;
}

function objectFailures(schema: Document, value: Document, at: string, path: string): string[] {
  const out: string[] = [];
  const keys = Object.keys(value);
  const child = (k: string) => (path ? `${path}.${k}` : k);
  for (const r of (schema.required as string[] | undefined) ?? []) if (!(r in value)) out.push(`${at}: required property '${r}' missing`);
  if (schema.minProperties !== undefined && keys.length < toNumber(schema.minProperties)) out.push(`${at}: minProperties`);
  if (schema.maxProperties !== undefined && keys.length > toNumber(schema.maxProperties)) out.push(`${at}: maxProperties`);
  const props = (schema.properties as Document | undefined) ?? {};
  const patterns = Object.entries((schema.patternProperties as Document | undefined) ?? {}).map(([p, s]) => [schemaRegex(p), s] as const);
  for (const k of keys) {
    let covered = false;
    if (k in props) {
      covered = true;
      out.push(...schemaFailures(props[k] as Document, value[k], child(k)));
    }
    for (const [re, sub] of patterns) {
      if (!re.test(k)) continue;
      covered = true;
      out.push(...schemaFailures(sub as Document, value[k], child(k)));
    }
    if (!covered && schema.additionalProperties === false) out.push(`${at}: additional property '${k}' not allowed`);
    if (!covered && isPlainObject(schema.additionalProperties)) out.push(...schemaFailures(schema.additionalProperties, value[k], child(k)));
  }
  for (const [k, dep] of Object.entries((schema.dependencies as Document | undefined) ?? {})) {
    if (!(k in value)) continue;
    if (Array.isArray(dep)) for (const d of dep) if (!(d in value)) out.push(`${at}: property '${k}' requires '${String(d)}'`);
    if (isPlainObject(dep)) out.push(...schemaFailures(dep, value, path));
  }
  return out;
}

/** mingo's `jsonSchemaValidator` option: compiles a schema into a document predicate. */
export const jsonSchemaValidator = (schema: Document) => {
  checkSchema(schema);
  return (doc: unknown) => schemaFailures(schema, doc).length === 0;
};
