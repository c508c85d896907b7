// A valid body for each operation, built from its schema (examples, enums, defaults) with company A's ids filled in,
// so that each bad-input case differs from an accepted request in exactly one way.

const clone = (value) => structuredClone(value);

/** A plausible value of `schema`; `resolve` follows $refs. */
function sample(schema, resolve, name) {
  const resolved = resolve(schema);
  if (resolved.example !== undefined) return clone(resolved.example);
  if (resolved.enum) return resolved.enum[0];
  if (resolved.oneOf) return sample(resolved.oneOf[0], resolve, name);
  if (resolved.default !== undefined && resolved.default !== null) return clone(resolved.default);
  switch (resolved.type) {
    case 'string':
      return resolved.format === 'date-time' ? new Date().toISOString() : `drill ${name}`;
    case 'number':
    case 'integer':
      return resolved.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return [sample(resolved.items, resolve, name)];
    default:
      return Object.fromEntries(Object.entries(resolved.properties ?? {}).map(([key, property]) => [key, sample(property, resolve, key)]));
  }
}

/**
 * What a generated body cannot know: the caller's own ids, where webhooks may point, values that must be unique.
 * Keyed by field name, applied at any depth.
 */
function contextValues(a, receiver) {
  return {
    contactId: a.ids.contact,
    conversationId: a.ids.conversation,
    agentId: a.ids.agent,
    url: receiver.url(`/${a.name}-extra`),
  };
}

function fill(value, context) {
  if (Array.isArray(value)) return value.map((item) => fill(item, context));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, key in context ? context[key] : fill(item, context)]));
}

/**
 * Per operation, where one generated value is wrong for any company: flows that would change A's conversation; a
 * delivery report carrying an error, which only a failure may.
 */
const OVERRIDES = {
  'POST /v1/flows': { steps: [{ type: 'send_message', text: 'drill' }] },
  'PUT /v1/flows/{id}': { steps: [{ type: 'send_message', text: 'drill' }] },
  'POST /api/external/messages/{id}/status': { status: 'failed' },
};

/** The valid JSON body of `operation` for company A, or undefined when it takes none (or multipart). */
export function validBody(operation, resolve, a, receiver) {
  if (operation.body?.contentType !== 'application/json') return undefined;
  const generated = fill(sample(operation.body.schema, resolve, 'body'), contextValues(a, receiver));
  return { ...generated, ...OVERRIDES[`${operation.method} ${operation.path}`] };
}
