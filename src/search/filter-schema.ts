import { FILTER_OPERATORS } from '../filters/index.js';
import { MAX_FILTER_CONDITIONS, MAX_FILTER_DEPTH } from '../filters/filter-parser.js';

/** The filter's OpenAPI schemas (recursive: a group holds filters), registered by registerFilterSchemas. */
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
  FilterAnd: {
    type: 'object',
    required: ['and'],
    additionalProperties: false,
    properties: { and: { type: 'array', minItems: 1, items: { $ref: FILTER_SCHEMA_REF } } },
  },
  FilterOr: {
    type: 'object',
    required: ['or'],
    additionalProperties: false,
    properties: { or: { type: 'array', minItems: 1, items: { $ref: FILTER_SCHEMA_REF } } },
  },
  [FILTER_SCHEMA_NAME]: {
    description: `A condition, or an and/or of filters: at most ${MAX_FILTER_DEPTH} levels of and/or and ${MAX_FILTER_CONDITIONS} conditions`,
    oneOf: [{ $ref: '#/components/schemas/FilterCondition' }, { $ref: '#/components/schemas/FilterAnd' }, { $ref: '#/components/schemas/FilterOr' }],
    example: {
      and: [
        { field: 'status', op: 'in', value: ['queued', 'human'] },
        { field: 'attributes.plan', op: 'eq', value: 'pro' },
      ],
    },
  },
};
