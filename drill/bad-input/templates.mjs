// A valid body for each operation, built from its schema (examples, enums, defaults) with company A's ids filled in,
// so that each bad-input case differs from an accepted request in exactly one way.
import { CHANNEL_KEY } from './world.mjs';

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
    messageId: a.ids.message,
    url: receiver.url(`/${a.name}-extra`),
  };
}

function fill(value, context) {
  if (Array.isArray(value)) return value.map((item) => fill(item, context));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, key in context ? context[key] : fill(item, context)]));
}

/** SLA targets no conversation reaches during the drill, with a warning shorter than each (else 400). */
const SLA_TARGETS = { firstResponseSeconds: 3600, nextResponseSeconds: 3600, resolutionSeconds: 86_400, warnBeforeSeconds: 600 };

/**
 * Per operation, where one generated value is wrong for any company: flows that would change A's conversation; a
 * delivery report carrying an error, which only a failure may; a channel key of its own (the example, whatsapp,
 * would give A's conversations a reply window); a canned response's shortCode that the created one does not take
 * (409); a template on the channel the world made (a key without a record answers 400); a rejection reason only
 * with `rejected`; SLA targets longer than the warning; a snooze in the future (the example date is past). Where a
 * body takes exactly one of several fields (a message's text, canned response or template; a recipient's contact,
 * phone or e-mail; a bulk action's own fields), the others are left out (`undefined`), and the one kept names A's
 * record, so that its foreign-id cases ask for B's: the bulk action assigns a conversation that stays open (A's
 * first one is closed by its baseline), so that B's agent or conversation reaches the assignment's own checks.
 */
function overrides(a) {
  const future = new Date(Date.now() + 7 * 86_400_000).toISOString();
  return {
    'POST /v1/flows': { steps: [{ type: 'send_message', text: 'drill' }] },
    'PUT /v1/flows/{id}': { steps: [{ type: 'send_message', text: 'drill' }] },
    'POST /api/external/messages/{id}/status': { status: 'failed' },
    // Without externalId: a second message with the baseline's would be its replay (200 with that message).
    'POST /api/external/messages': { mediaId: a.ids.upload, type: 'image', externalId: undefined },
    'POST /v1/conversations/{id}/messages': { cannedResponseId: a.ids.cannedResponse, text: undefined, template: undefined, private: undefined, mentions: undefined },
    'POST /v1/messages': { to: { contactId: a.ids.contact }, channel: CHANNEL_KEY, text: 'drill', template: undefined, name: undefined },
    'POST /v1/conversations/bulk': { ids: [a.ids.openConversation], action: 'assign', priority: undefined, tags: undefined, until: undefined, reason: undefined },
    'POST /v1/conversations/{id}/snooze': { until: future },
    'POST /v1/channels': { key: 'drill-created' },
    'PATCH /v1/canned-responses/{id}': { shortCode: 'drill-patched' },
    'POST /v1/message-templates': { channel: CHANNEL_KEY },
    'PATCH /api/external/message-templates/{id}': { status: 'rejected' },
    'POST /v1/sla-policies': SLA_TARGETS,
    'PATCH /v1/sla-policies/{id}': SLA_TARGETS,
  };
}

/** The valid JSON body of `operation` for company A, or undefined when it takes none (or multipart). */
export function validBody(operation, resolve, a, receiver) {
  if (operation.body?.contentType !== 'application/json') return undefined;
  const generated = fill(sample(operation.body.schema, resolve, 'body'), contextValues(a, receiver));
  const body = { ...generated, ...overrides(a)[`${operation.method} ${operation.path}`] };
  for (const [key, value] of Object.entries(body)) if (value === undefined) delete body[key];
  return body;
}
