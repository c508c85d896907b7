import { FILTER_OPERATORS } from '../filters/index.js';
import { MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH } from '../filters/filter-parser.js';

/**
 * The filter's OpenAPI schemas. A group holds filters, down to MAX_FILTER_DEPTH levels: the levels are spelled out
 * (FilterAnd, FilterAnd2, ...) rather than referring back to Filter, because Swagger UI stops rendering on a
 * schema that contains itself, and no filter deeper than the limit is taken anyway.
 */
export const FILTER_SCHEMA_NAME = 'Filter';
export const FILTER_SCHEMA_REF = `#/components/schemas/${FILTER_SCHEMA_NAME}`;

export const FILTER_SCHEMAS: Record<string, object> = {
  FilterCondition: {
    type: 'object',
    required: ['field', 'op', 'value'],
    additionalProperties: false,
    properties: {
      field: {
        type: 'string',
        description: 'A field of the list (docs/filters.md), e.g. `status`, `attributes.plan`, `contact.tags`',
        example: 'status',
      },
      op: { type: 'string', enum: [...FILTER_OPERATORS] },
      value: {
        description:
          'Of the field\'s type; a list for in/nin, [from, to] for between, a boolean for exists, a duration ("30m", "12h", "7d") for withinLast/olderThan',
        oneOf: [
          { type: 'string' },
          { type: 'number' },
          { type: 'boolean' },
          { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] } },
        ],
        example: 'queued',
      },
    },
  },
  ...groupSchemas(),
  [FILTER_SCHEMA_NAME]: {
    description: `A condition, or an and/or of filters: at most ${MAX_FILTER_DEPTH} levels of and/or and ${MAX_FILTER_CONDITIONS} conditions`,
    oneOf: levelOf(1),
    example: {
      and: [
        { field: 'status', op: 'in', value: ['queued', 'human'] },
        { field: 'attributes.plan', op: 'eq', value: 'pro' },
      ],
    },
  },
};

/** What a filter at `level` of and/or may be: a condition, or (within the limit) a group whose items are one level down. */
function levelOf(level: number): object[] {
  const condition = { $ref: '#/components/schemas/FilterCondition' };
  if (level > MAX_FILTER_DEPTH) return [condition];
  const suffix = level === 1 ? '' : String(level);
  return [condition, { $ref: `#/components/schemas/FilterAnd${suffix}` }, { $ref: `#/components/schemas/FilterOr${suffix}` }];
}

/** FilterAnd and FilterOr of every level: their items are filters of the next level. */
function groupSchemas(): Record<string, object> {
  const schemas: Record<string, object> = {};
  for (let level = 1; level <= MAX_FILTER_DEPTH; level += 1) {
    const suffix = level === 1 ? '' : String(level);
    for (const op of ['and', 'or'] as const) {
      schemas[`Filter${op === 'and' ? 'And' : 'Or'}${suffix}`] = {
        type: 'object',
        required: [op],
        additionalProperties: false,
        properties: { [op]: { type: 'array', minItems: 1, items: itemsOf(levelOf(level + 1)) } },
      };
    }
  }
  return schemas;
}

/** One schema as itself, several as their oneOf (a oneOf of one is refused by linters). */
function itemsOf(schemas: object[]): object {
  return schemas.length === 1 ? schemas[0] : { oneOf: schemas };
}
