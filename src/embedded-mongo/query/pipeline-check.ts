/**
 * Up-front validation of aggregation pipelines, so unknown stages and operators fail with MongoDB's error codes
 * even on empty collections (mingo only notices them while evaluating a document, and words them differently).
 */
import type { Document } from 'bson';
import { isPlainObject } from '../bson-values.js';
import { badValue, MongoCommandError, notSupported } from '../errors.js';
import { hasOperator, isKnownOperator, UNSUPPORTED_STAGES } from './mingo.js';

/** Rejects any `$name` key that is not an operator; `inMatch` selects the query-language error. */
function checkOperators(value: unknown, inMatch: boolean): void {
  if (Array.isArray(value)) {
    for (const v of value) checkOperators(v, inMatch);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [k, v] of Object.entries(value)) {
    if (k.startsWith('$')) {
      if (!isKnownOperator(k)) {
        if (inMatch) throw badValue(`unknown operator: ${k}`);
        throw new MongoCommandError(168, `Unrecognized expression '${k}'`);
      }
      if (k === '$literal') continue;
      checkOperators(v, inMatch && k !== '$expr');
    } else {
      checkOperators(v, inMatch);
    }
  }
}

export function validatePipeline(pipeline: unknown): asserts pipeline is Document[] {
  if (!Array.isArray(pipeline)) throw new MongoCommandError(14, "'pipeline' option must be specified as an array");
  for (const stage of pipeline) {
    const keys = isPlainObject(stage) ? Object.keys(stage) : [];
    if (keys.length !== 1) throw new MongoCommandError(40323, 'A pipeline stage specification object must contain exactly one field.');
    const name = keys[0];
    const arg = (stage as Document)[name];
    if (UNSUPPORTED_STAGES.has(name)) throw notSupported(`${name} is not supported by the embedded engine`);
    if (!hasOperator('pipeline', name)) throw new MongoCommandError(40324, `Unrecognized pipeline stage name: '${name}'`);
    switch (name) {
      case '$match':
        checkOperators(arg, true);
        break;
      case '$group':
        for (const [field, acc] of Object.entries(isPlainObject(arg) ? arg : {})) {
          if (field === '_id') continue;
          const op = isPlainObject(acc) ? Object.keys(acc)[0] : undefined;
          if (!op || !hasOperator('accumulator', op)) throw new MongoCommandError(15952, `unknown group operator '${op ?? String(acc)}'`);
        }
        checkOperators(arg, false);
        break;
      case '$facet':
        for (const sub of Object.values(isPlainObject(arg) ? arg : {})) validatePipeline(sub);
        break;
      case '$lookup':
      case '$unionWith':
        if (isPlainObject(arg) && arg.pipeline !== undefined) validatePipeline(arg.pipeline);
        checkOperators({ ...(isPlainObject(arg) ? arg : {}), pipeline: undefined }, false);
        break;
      default:
        checkOperators(arg, false);
    }
  }
}
