/**
 * The one filter language (contract section 20): search, saved views and automation rules parse with parseFilter,
 * query with toMongoQuery, and evaluate in memory with matchesFilter / explainFilter (docs/filters.md).
 */
export {
  FILTER_OPERATORS,
  OPERATORS_BY_TYPE,
  fieldNames,
  resolveField,
  type FilterField,
  type FilterModel,
  type FilterOperator,
  type FilterSchema,
  type FilterValueType,
} from './filter-fields.js';
export {
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  conditionsOf,
  parseDuration,
  parseFilter,
  type ParsedCondition,
  type ParsedFilter,
  type ParsedGroup,
} from './filter-parser.js';
export { MAX_CONTACT_MATCHES, allOf, toMongoQuery, type MongoQuery, type QueryOptions } from './filter-query.js';
export { explainFilter, matchesFilter, type ConditionResult, type EvaluatedRecord, type EvaluationOptions } from './filter-evaluator.js';
