/**
 * Up-front validation of aggregation pipelines, so unknown stages and operators fail with MongoDB's error codes
 * even on empty collections (mingo only notices them while evaluating a document, and words them differently).
 */
import type { Document } from 'bson';
import { isPlainObject } from '../bson-values.js';
import { badValue, MongoCommandError, notSupported } from '../errors.js';
import { hasOperator, isKnownOperator, UNSUPPORTED_STAGES } from './mingo.js';

/** Operators the engine evaluates itself: `$options` beside `$regex`, `$meta` (text score), `$text` in a first `$match`. */
const ENGINE_KNOWN = new Set(['$options', '$meta']);

/** Rejects any `$name` key that is not an operator; `inMatch` selects the query-language error. */
function checkOperators(value: unknown, inMatch: boolean, allowText = false): void {
  if (Array.isArray(value)) {
    for (const v of value) checkOperators(v, inMatch, allowText);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const [k, v] of Object.entries(value)) {
    if (k === '$text' && allowText) continue;
    if (k === '$and' && allowText) {
      checkOperators(v, inMatch, true);
      continue;
    }
    if (k.startsWith('$')) {
      if (!isKnownOperator(k) && !ENGINE_KNOWN.has(k)) {
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

/** Stages the engine runs itself: the writing stages (last only) and `$listLocalSessions` (first of `aggregate: 1`). */
const ENGINE_STAGES = new Set(['$out', '$merge', '$listLocalSessions']);

/**
 * Checks a pipeline's stages and operators. `withText` (a top-level aggregate) allows `$text` in the first `$match`;
 * the writing stages are only allowed as the last stage of such a pipeline.
 */
export function validatePipeline(pipeline: unknown, { withText = false } = {}): asserts pipeline is Document[] {
  if (!Array.isArray(pipeline)) throw new MongoCommandError(14, "'pipeline' option must be specified as an array");
  pipeline.forEach((stage, position) => {
    const keys = isPlainObject(stage) ? Object.keys(stage) : [];
    if (keys.length !== 1) throw new MongoCommandError(40323, 'A pipeline stage specification object must contain exactly one field.');
    const name = keys[0];
    const arg = (stage as Document)[name];
    if (UNSUPPORTED_STAGES.has(name)) throw notSupported(`${name} is not supported by the embedded engine`);
    if ((name === '$out' || name === '$merge') && (!withText || position !== pipeline.length - 1))
      throw new MongoCommandError(40601, `${name} can only be the final stage in the pipeline`);
    if (name === '$listLocalSessions' && position !== 0) throw new MongoCommandError(40602, '$listLocalSessions is only valid as the first stage in a pipeline');
    if (ENGINE_STAGES.has(name)) return;
    if (!hasOperator('pipeline', name)) throw new MongoCommandError(40324, `Unrecognized pipeline stage name: '${name}'`);
    switch (name) {
      case '$match':
        checkOperators(arg, true, withText && position === 0);
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
  });
}
