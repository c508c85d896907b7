import type { AttributeRule } from '../attributes/attribute-values.js';
import type { AttributeType } from '../attributes/attribute-definition.schema.js';

/** What a filter selects: conversations or contacts (contract section 20). */
export type FilterModel = 'conversation' | 'contact';

/** The value type of a field, which decides its operators and the values they take. */
export type FilterValueType = 'text' | 'number' | 'boolean' | 'date' | 'id';

export const FILTER_OPERATORS = [
  'eq',
  'ne',
  'in',
  'nin',
  'exists',
  'contains',
  'startsWith',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
  'withinLast',
  'olderThan',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

const ALL: FilterOperator[] = ['eq', 'ne', 'in', 'nin', 'exists'];
const ORDERED: FilterOperator[] = ['gt', 'gte', 'lt', 'lte', 'between'];
/** The operators each value type takes (contract section 20). */
export const OPERATORS_BY_TYPE: Record<FilterValueType, readonly FilterOperator[]> = {
  text: [...ALL, 'contains', 'startsWith'],
  number: [...ALL, ...ORDERED],
  boolean: ALL,
  date: [...ALL, ...ORDERED, 'withinLast', 'olderThan'],
  id: ALL,
};

/**
 * How a filter field is stored. `path` is the stored path (`storage` says how a derived field is read from it), `values`
 * restricts a text field to a set (statuses, a list attribute's options), `contact` marks a field of the conversation's
 * contact, resolved to contact ids (contract section 20).
 */
export interface FilterField {
  name: string;
  type: FilterValueType;
  path: string;
  values?: readonly string[];
  storage?: 'present' | 'nonEmptyArray';
  contact?: boolean;
}

const CONVERSATION_STATUSES = ['bot', 'queued', 'human', 'closed'] as const;
const PRIORITIES = ['low', 'medium', 'high'] as const;

/** The fixed fields of each model; `attributes.<key>` and `contact.attributes.<key>` come from the definitions. */
const CORE_FIELDS: Record<FilterModel, FilterField[]> = {
  conversation: [
    { name: 'status', type: 'text', path: 'status', values: CONVERSATION_STATUSES },
    { name: 'priority', type: 'text', path: 'priority', values: PRIORITIES },
    { name: 'channel', type: 'text', path: 'channel' },
    { name: 'teamId', type: 'id', path: 'teamId' },
    { name: 'assignedAgentId', type: 'id', path: 'assignedAgentId' },
    { name: 'tags', type: 'text', path: 'tags' },
    { name: 'subject', type: 'text', path: 'subject' },
    { name: 'createdAt', type: 'date', path: 'createdAt' },
    { name: 'lastMessageAt', type: 'date', path: 'lastMessageAt' },
    { name: 'queuedAt', type: 'date', path: 'queuedAt' },
    { name: 'snoozed', type: 'boolean', path: 'snoozedUntil', storage: 'present' },
    { name: 'slaBreached', type: 'boolean', path: 'sla.breaches', storage: 'nonEmptyArray' },
    { name: 'csatRating', type: 'number', path: 'csat.rating' },
    { name: 'contact.tags', type: 'text', path: 'tags', contact: true },
  ],
  contact: [
    { name: 'name', type: 'text', path: 'name' },
    { name: 'email', type: 'text', path: 'email' },
    { name: 'phone', type: 'text', path: 'phone' },
    { name: 'tags', type: 'text', path: 'tags' },
    { name: 'createdAt', type: 'date', path: 'createdAt' },
  ],
};

/** The field names a model's filters take, as error messages list them. */
export function fieldNames(model: FilterModel): string[] {
  const attributes = model === 'conversation' ? ['attributes.<key>', 'contact.attributes.<key>'] : ['attributes.<key>'];
  return [...CORE_FIELDS[model].map((field) => field.name), ...attributes];
}

const ATTRIBUTE_VALUE_TYPES: Record<AttributeType, FilterValueType> = {
  text: 'text',
  number: 'number',
  boolean: 'boolean',
  date: 'date',
  list: 'text',
};

function attributeField(name: string, rule: AttributeRule, contact: boolean): FilterField {
  return {
    name,
    type: ATTRIBUTE_VALUE_TYPES[rule.type],
    path: `attributes.${rule.key}`,
    ...(rule.type === 'list' ? { values: rule.options } : {}),
    ...(contact ? { contact: true } : {}),
  };
}

/** The attribute definitions a filter is checked against: the model's own, and (conversations) its contacts'. */
export interface FilterSchema {
  model: FilterModel;
  attributes: ReadonlyMap<string, AttributeRule>;
  contactAttributes?: ReadonlyMap<string, AttributeRule>;
}

/** The field `name` means for `schema`'s model, or null when it is none. */
export function resolveField(schema: FilterSchema, name: string): FilterField | null {
  const core = CORE_FIELDS[schema.model].find((field) => field.name === name);
  if (core) return core;
  if (name.startsWith('attributes.')) {
    const rule = schema.attributes.get(name.slice('attributes.'.length));
    return rule ? attributeField(name, rule, false) : null;
  }
  if (schema.model === 'conversation' && name.startsWith('contact.attributes.')) {
    const rule = schema.contactAttributes?.get(name.slice('contact.attributes.'.length));
    return rule ? attributeField(name, rule, true) : null;
  }
  return null;
}
