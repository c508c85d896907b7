/**
 * What every stored document must satisfy: MongoDB's size limit (16 MiB), a valid `_id`, and the collection's
 * validator (`validator`, `validationLevel`, `validationAction` from `create`/`collMod`; `$jsonSchema` or any query).
 * A failing document is refused with 121 DocumentValidationFailure and an `errInfo` describing the failure.
 */
import { calculateObjectSize, type Document } from 'bson';
import { isDbRef, isPlainObject, setOwn } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import { schemaFailures } from '../query/json-schema.js';
import { compileFilter, type Matcher } from '../query/mingo.js';
import { MAX_BSON_SIZE } from '../wire-protocol.js';
import type { Collection } from '../storage/collection.js';

/** BSON sizes of the update results measured, so that the next update of a document measures only what it changed. */
const measured = new WeakMap<Document, number>();

/** The bytes field `key` takes in a BSON document (0 when undefined, which is not stored). */
function elementSize(key: string, value: unknown): number {
  const holder: Document = {};
  setOwn(holder, key, value);
  return calculateObjectSize(holder, { ignoreUndefined: true }) - 5;
}

/**
 * The BSON size of `doc`; with `previous`, the version it was computed from, from that one's size when known: a
 * document's size is the sum of its fields' and an update shares its untouched fields with the stored version.
 */
function bsonSize(doc: Document, previous: Document | undefined): number {
  const known = previous && measured.get(previous);
  if (known === undefined) return calculateObjectSize(doc, { ignoreUndefined: true });
  let size = known;
  const has = (d: Document, key: string) => Object.prototype.hasOwnProperty.call(d, key);
  for (const key of Object.keys(doc)) {
    if (!has(previous!, key)) size += elementSize(key, doc[key]);
    else if (doc[key] !== previous![key]) size += elementSize(key, doc[key]) - elementSize(key, previous![key]);
  }
  for (const key of Object.keys(previous!)) if (!has(doc, key)) size -= elementSize(key, previous![key]);
  return size;
}

/**
 * Refuses a document over 16 MiB: `inserting` words the message as for an insert, else as for an update's result,
 * which gives the stored version it was computed from as `previous` (the result must be stored as it is).
 */
export function checkSize(doc: Document, inserting: boolean, previous?: Document): void {
  const size = bsonSize(doc, previous);
  if (previous) measured.set(doc, size);
  if (size <= MAX_BSON_SIZE) return;
  if (inserting) throw new MongoCommandError(10334, `object to insert too large. size in bytes: ${size}, max size: ${MAX_BSON_SIZE}`);
  throw new MongoCommandError(17419, `Resulting document after update is larger than ${MAX_BSON_SIZE}`);
}

function dollarKey(value: unknown): string | undefined {
  if (Array.isArray(value)) return value.map(dollarKey).find(Boolean);
  if (!isPlainObject(value) || isDbRef(value)) return undefined;
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) return k;
    const nested = dollarKey(v);
    if (nested) return nested;
  }
  return undefined;
}

/** The `_id` rules of MongoDB: no array, no regex, no `$`-prefixed field inside. */
export function checkId(doc: Document): void {
  const id = doc._id;
  if (Array.isArray(id)) throw badValue("can't use an array for _id");
  if (id instanceof RegExp || (id as { _bsontype?: string })?._bsontype === 'BSONRegExp') throw badValue("can't use a regex for _id");
  const key = dollarKey(id);
  if (key) throw new MongoCommandError(52, `_id fields may not contain '$'-prefixed fields: ${key} is not valid for storage.`);
}

/** A time series measurement needs a Date in its time field. */
export function checkMeasurement(coll: Collection | undefined, doc: Document): void {
  const timeField = (coll?.options.timeseries as Document | undefined)?.timeField as string | undefined;
  if (timeField && !(doc[timeField] instanceof Date)) throw badValue(`'${timeField}' must be present and contain a valid BSON UTC datetime value`);
}

const compiled = new WeakMap<Document, Matcher>();

function matcherFor(validator: Document): Matcher {
  let m = compiled.get(validator);
  if (!m) compiled.set(validator, (m = compileFilter(validator)));
  return m;
}

/** How the validator failed, in the shape of MongoDB's `errInfo.details`. */
function details(validator: Document, doc: Document): Document {
  const clauses: Document[] = [];
  for (const [k, v] of Object.entries(validator)) {
    if (k === '$jsonSchema') {
      const reasons = schemaFailures(v as Document, doc);
      if (reasons.length) clauses.push({ operatorName: '$jsonSchema', schemaRulesNotSatisfied: reasons.map((reason) => ({ reason })) });
    } else if (!compileFilter({ [k]: v }).test(doc)) clauses.push({ operatorName: k.startsWith('$') ? k : '$eq', specifiedAs: { [k]: v } });
  }
  if (clauses.length === 1) return clauses[0];
  return { operatorName: '$and', clausesNotSatisfied: clauses.map((c, index) => ({ index, details: c })) };
}

/**
 * Applies the collection's validator to a document being written. `before` is the stored version an update replaces:
 * with `validationLevel: 'moderate'` documents that already failed the validator may stay invalid.
 */
export function validateDocument(coll: Collection | undefined, doc: Document, before: Document | undefined, bypass: boolean): void {
  const validator = coll?.options.validator as Document | undefined;
  if (!validator || bypass || Object.keys(validator).length === 0) return;
  const level = coll!.options.validationLevel ?? 'strict';
  if (level === 'off') return;
  const matcher = matcherFor(validator);
  if (level === 'moderate' && before && !matcher.test(before)) return;
  if (matcher.test(doc)) return;
  if ((coll!.options.validationAction ?? 'error') === 'warn') return;
  throw new MongoCommandError(121, 'Document failed validation', { errInfo: { failingDocumentId: doc._id, details: details(validator, doc) } });
}

function containsKey(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return value.some((v) => containsKey(v, key));
  return isPlainObject(value) && Object.entries(value).some(([k, v]) => k === key || containsKey(v, key));
}

export const VALIDATION_LEVELS = ['off', 'strict', 'moderate'];
export const VALIDATION_ACTIONS = ['error', 'warn'];

/** Checks a validator given to `create` or `collMod`; throws what MongoDB answers for a bad one. */
export function checkValidator(options: Document): void {
  const { validator, validationLevel, validationAction } = options;
  if (validator !== undefined) {
    if (!isPlainObject(validator)) throw new MongoCommandError(14, "BSON field 'validator' is the wrong type, expected type 'object'");
    const refused = ['$where', '$near', '$nearSphere', '$text'].find((op) => containsKey(validator, op));
    if (refused) throw badValue(`${refused} is not allowed inside of a document validator`);
    compileFilter(validator);
  }
  if (validationLevel !== undefined && !VALIDATION_LEVELS.includes(validationLevel)) throw badValue(`Enumeration value '${String(validationLevel)}' for field 'validationLevel' is not a valid value.`);
  if (validationAction !== undefined && !VALIDATION_ACTIONS.includes(validationAction)) throw badValue(`Enumeration value '${String(validationAction)}' for field 'validationAction' is not a valid value.`);
}
