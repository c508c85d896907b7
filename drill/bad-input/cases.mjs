// The bad requests, generated per operation. Each case: `{ operation, kind, label, method, url, auth, json | body +
// contentType, expect, foreign }`. `expect: 'refused'` means the contract requires a 4xx (malformed JSON, wrong types,
// unknown fields, $-keys, malformed or foreign ids); `'any'` means only "no 5xx". `foreign` marks a request aimed at
// company B's records: a 2xx answer to it is a cross-company read or write.
import { ObjectId } from 'mongodb';

const MIB = 1024 * 1024;
const WRONG_VALUES = {
  string: [12345, true, { a: 1 }, ['x']],
  number: ['12', true, { a: 1 }, [1]],
  integer: ['12', true, { a: 1 }, [1]],
  boolean: ['true', 1, { a: 1 }, [true]],
  array: ['x', 1, true, { a: 1 }],
  object: ['x', 1, true, ['x']],
  // A value of a free-form map (contact attributes): primitives only.
  mapValue: [{ a: 1 }, ['x']],
};
const MALFORMED_JSON = [
  ['truncated', '{"name":'],
  ['single quotes', "{'name': 'x'}"],
  ['trailing comma', '{"name": "x",}'],
  ['bare word', 'hello'],
  ['NaN', '{"name": NaN}'],
  ['unclosed array', '[1, 2'],
  ['top-level array', '[]'],
  ['top-level string', '"text"'],
  ['top-level number', '123'],
  ['top-level null', 'null'],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
  ['100 000 nested arrays', '['.repeat(100_000) + ']'.repeat(100_000)],
  ['__proto__ key', '{"__proto__": {"role": "admin", "companyId": "x"}}'],
  ['constructor.prototype', '{"constructor": {"prototype": {"role": "admin"}}}'],
];
const MALFORMED_IDS = [
  ['short', 'abc'],
  ['number', '1'],
  ['24 non-hex', 'z'.repeat(24)],
  ['23 hex', 'a'.repeat(23)],
  ['25 hex', 'a'.repeat(25)],
  ['$ne', encodeURIComponent('$ne')],
  ['{"$gt":""}', encodeURIComponent('{"$gt":""}')],
  ['[$ne]=1', encodeURIComponent('[$ne]=1')],
  ['dot-dot', encodeURIComponent('../..')],
  ['10 000 chars', 'a'.repeat(10_000)],
];
/** The body-shape limits of contract section 18. */
const MAX_BODY_KEYS = 1000;
const MAX_BODY_DEPTH = 20;

/** `"k0":1,"k1":1,...`: `count` members (each name after `prefix`), as JSON text, made once per shape. */
const membersText = (() => {
  const made = new Map();
  return (count, prefix = '') => {
    const key = `${count}/${prefix}`;
    if (!made.has(key)) made.set(key, Array.from({ length: count }, (_, i) => `${JSON.stringify(`${prefix}k${i}`)}:1`).join(','));
    return made.get(key);
  };
})();

/** `base` (an object) with more members, as JSON text: built by concatenation, the big part shared between operations. */
function withMembers(base, members) {
  const text = JSON.stringify(base);
  return `${text.slice(0, -1)}${text === '{}' ? '' : ','}${members}}`;
}

/**
 * Bodies that cost more to refuse than their size (contract section 18): many keys, deep nesting, long unknown
 * field names. The review that found them: 90 000 unknown keys (979 KB) to the public login took 4.5-8.1 s of
 * CPU and answered 9.5 MB.
 */
function shapeCases(template, add) {
  const base = template && typeof template === 'object' && !Array.isArray(template) ? template : {};
  const room = MAX_BODY_KEYS - 10 - JSON.stringify(base).split(':').length;
  const json = (body) => ({ body, contentType: 'application/json' });
  add('body shape', '90 000 keys (979 KB)', json(withMembers(base, membersText(90_000))));
  add('body shape', `${MAX_BODY_KEYS + 1} keys`, json(withMembers(base, membersText(MAX_BODY_KEYS + 1))));
  add('body shape', `${MAX_BODY_KEYS + 1} array items`, json(withMembers(base, `"drillItems":[${Array(MAX_BODY_KEYS + 1).fill(0).join(',')}]`)));
  add('body shape', '90 000 keys, one level down', json(withMembers(base, `"drillNested":{${membersText(90_000)}}`)));
  add('body shape', `${MAX_BODY_DEPTH + 1} levels`, json(withMembers(base, `"drillDeep":${'{"a":'.repeat(MAX_BODY_DEPTH)}1${'}'.repeat(MAX_BODY_DEPTH)}`)));
  add('body shape', '10 000 levels', json(withMembers(base, `"drillDeep":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`)));
  add('body shape', `${room} unknown keys of 900 characters`, json(withMembers(base, membersText(room, 'x'.repeat(900)))));
  add('body shape', `${room} unknown keys`, json(withMembers(base, membersText(room))));
  add('body shape', '90 000 form fields', { body: FORM_FIELDS, contentType: 'application/x-www-form-urlencoded' });
}

const FORM_FIELDS = Array.from({ length: 90_000 }, (_, i) => `k${i}=1`).join('&');

/** Path segment before a parameter → the kind of record it names. */
const RECORD_OF_SEGMENT = {
  'api-keys': 'apiKey',
  contacts: 'contact',
  conversations: 'conversation',
  media: 'media',
  agents: 'agent',
  flows: 'flow',
  webhooks: 'webhook',
  deliveries: 'delivery',
  messages: 'message',
  'canned-responses': 'cannedResponse',
  channels: 'channel',
  'message-templates': 'messageTemplate',
  'sla-policies': 'slaPolicy',
  signed: 'signedLink',
};
/**
 * Where the segment does not say enough, `<path> {<param>}` → the kind of record: a rating is taken only on a
 * conversation awaiting one, and Interface B's media route is an upload's first of all.
 */
const RECORD_OF_PARAM = {
  '/api/external/conversations/{id}/csat {id}': 'surveyedConversation',
  '/api/external/media/{id} {id}': 'upload',
};
/** Body fields holding an id of the caller's records. */
const RECORD_OF_FIELD = {
  contactId: 'contact',
  conversationId: 'conversation',
  agentId: 'agent',
  messageId: 'message',
  cannedResponseId: 'cannedResponse',
  mediaId: 'upload',
  // The bulk action's conversations (an array: its items are named by the array's field).
  ids: 'conversation',
};

const typeOf = (schema) => schema.type ?? (schema.properties || schema.oneOf ? 'object' : undefined);

/** Every field of a body schema, with its path in the body, down to `depth` levels (arrays through their first item). */
function fieldsOf(schema, resolve, path = [], depth = 3) {
  const fields = [];
  const object = resolve(schema.oneOf ? schema.oneOf[0] : schema);
  for (const [name, property] of Object.entries(object.properties ?? {})) {
    const resolved = resolve(property);
    const fieldPath = [...path, name];
    fields.push({ path: fieldPath, schema: resolved, type: typeOf(resolved) });
    if (depth === 0) continue;
    if (typeOf(resolved) === 'object' && (resolved.properties || resolved.oneOf)) fields.push(...fieldsOf(resolved, resolve, fieldPath, depth - 1));
    if (resolved.additionalProperties && typeof resolved.additionalProperties === 'object') {
      fields.push({ path: [...fieldPath, 'drillKey'], schema: {}, type: 'mapValue' });
    }
    if (resolved.type === 'array') {
      const items = resolve(resolved.items ?? {});
      if (typeOf(items) === 'object') fields.push(...fieldsOf(items, resolve, [...fieldPath, 0], depth - 1));
      else if (items.type) fields.push({ path: [...fieldPath, 0], schema: items, type: items.type });
    }
  }
  return fields;
}

/** A copy of `body` with `value` at `path` (containers created as needed). */
function setAt(body, path, value) {
  const copy = structuredClone(body ?? {});
  let node = copy;
  path.slice(0, -1).forEach((key, index) => {
    if (node[key] === null || typeof node[key] !== 'object') node[key] = typeof path[index + 1] === 'number' ? [] : {};
    node = node[key];
  });
  node[path.at(-1)] = value;
  return copy;
}

const show = (path) => path.join('.');

function urlOf(operation, params, query = '') {
  const path = operation.path.replace(/\{(\w+)\}/g, (_, name) => params[name]);
  return query ? `${path}?${query}` : path;
}

/** Which record a path parameter names: by the segment before it. */
function recordOfParam(operation, name) {
  const special = RECORD_OF_PARAM[`${operation.path} {${name}}`];
  if (special) return special;
  const segments = operation.path.split('/');
  const segment = segments[segments.indexOf(`{${name}}`) - 1];
  const record = RECORD_OF_SEGMENT[segment];
  if (!record) throw new Error(`bad-input drill: no fixture for the parameter {${name}} of ${operation.method} ${operation.path}`);
  return record;
}

/**
 * A signed download link (`/v1/media/signed/<payload>.<signature>`, base64url; the payload is the company's id, the
 * file's id and the expiry) is a credential of its own: company B's link serves B's file to anyone who has it, so it
 * is no foreign id. What must be refused (403) is any link not issued as it is: one character changed, parts of A's
 * and B's links put together, A's link naming B's company or B's file, a later expiry, a missing or extra part.
 */
function signedLinkVariants(name, own, foreign) {
  const [payload, signature] = own.split('.');
  const [foreignPayload, foreignSignature] = foreign.split('.');
  const bytes = Buffer.from(payload, 'base64url');
  const theirs = Buffer.from(foreignPayload, 'base64url');
  const encode = (buffer) => buffer.toString('base64url');
  const spliced = (start, end) => encode(Buffer.concat([bytes.subarray(0, start), theirs.subarray(start, end), bytes.subarray(end)]));
  const later = Buffer.from(bytes);
  later.writeUInt32BE(later.readUInt32BE(24) + 86_400, 24);
  const changed = `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
  const variant = (kind, label, value, isForeign = false) => [kind, `{${name}} ${label}`, value, isForeign];
  return [
    variant('tampered link', 'signature with one character changed', `${payload}.${changed}`),
    variant('tampered link', 'payload with one character changed', `${payload[0] === 'A' ? 'B' : 'A'}${payload.slice(1)}.${signature}`),
    variant('tampered link', 'expiry a day later', `${encode(later)}.${signature}`),
    variant('tampered link', 'without its signature', payload),
    variant('tampered link', 'with a third part', `${own}.${signature}`),
    variant('tampered link', 'signature of base64 padding', `${payload}.${signature}=`),
    variant('foreign path id', "company B's payload, A's signature", `${foreignPayload}.${signature}`, true),
    variant('foreign path id', "A's payload, company B's signature", `${payload}.${foreignSignature}`, true),
    variant('foreign path id', "A's link naming company B", `${spliced(0, 12)}.${signature}`, true),
    variant('foreign path id', "A's link naming company B's file", `${spliced(12, 24)}.${signature}`, true),
    variant('foreign path id', "A's link naming company B and its file", `${spliced(0, 24)}.${signature}`, true),
  ];
}

function nonexistentLike(id) {
  const prefix = /^[a-z]+_/.exec(id)?.[0] ?? '';
  return prefix + new ObjectId().toHexString();
}

function bodyCases(operation, template, resolve, a, b) {
  const cases = [];
  const add = (kind, label, request, expect = 'refused', foreign = false) => cases.push({ kind, label, expect, foreign, ...request });
  const fields = fieldsOf(operation.body.schema, resolve);
  const first = fields[0]?.path[0] ?? 'name';

  for (const [label, raw] of MALFORMED_JSON) add('malformed JSON', label, { body: raw, contentType: 'application/json' });
  add('malformed JSON', 'duplicate key hiding an operator', { body: `{"${first}": "x", "${first}": {"$ne": null}}`, contentType: 'application/json' });
  // An empty body is an empty object to the parser: fine for a patch whose fields are all optional.
  add('malformed JSON', 'empty body', { body: '', contentType: 'application/json' }, 'any');
  add('content type', 'text/plain', { body: JSON.stringify(template), contentType: 'text/plain' }, 'any');
  add('content type', 'JSON in latin1', { body: JSON.stringify(template), contentType: 'application/json; charset=latin1' });
  add('content type', 'urlencoded $-key', { body: `${first}[$ne]=1`, contentType: 'application/x-www-form-urlencoded' });
  add('content type', 'gzip that is not', { body: JSON.stringify(template), contentType: 'application/json', headers: { 'content-encoding': 'gzip' } });

  for (const field of fields) {
    for (const wrong of WRONG_VALUES[field.type] ?? []) {
      add('wrong type', `${show(field.path)} = ${JSON.stringify(wrong)}`, { json: setAt(template, field.path, wrong) });
    }
    add('$-operator', `${show(field.path)} = {"$ne": null}`, { json: setAt(template, field.path, { $ne: null }) });
    add('$-operator', `${show(field.path)} = {"$gt": ""}`, { json: setAt(template, field.path, { $gt: '' }) });
    // A free-form map (contact attributes) takes any key: nothing is unknown in it.
    if (field.type === 'object' && !field.schema.additionalProperties) {
      add('unknown field', `${show(field.path)}.drillUnknown`, { json: setAt(template, [...field.path, 'drillUnknown'], 1) });
    }
    if (field.type === 'string') {
      add('1 MB string', `${show(field.path)} of 1 MiB`, { json: setAt(template, field.path, 'x'.repeat(MIB)) });
      add('1 MB string', `${show(field.path)} just under the body limit`, { json: setAt(template, field.path, 'x'.repeat(MIB - 4096)) }, 'any');
    }
    // An array's items are named by the array's field (`ids.0`); the array itself is no id.
    const last = field.path.at(-1);
    const record = field.type === 'array' ? undefined : RECORD_OF_FIELD[typeof last === 'number' ? field.path.at(-2) : last];
    if (record) {
      add('foreign id in body', `${show(field.path)} of company B`, { json: setAt(template, field.path, b.ids[record]) }, 'refused', true);
      add('malformed id in body', `${show(field.path)} = "abc"`, { json: setAt(template, field.path, 'abc') });
    }
  }
  add('unknown field', 'drillUnknown', { json: { ...template, drillUnknown: 1 } });
  add('unknown field', 'companyId of company B', { json: { ...template, companyId: b.companyId } }, 'refused', true);
  add('$-operator', 'top-level $where', { json: { ...template, $where: 'sleep(1000)' } });
  add('$-operator', 'top-level $set', { json: { ...template, $set: { companyId: b.companyId } } }, 'refused', true);
  add('$-operator', 'dotted key', { json: { ...template, 'a.$b': 1 } });
  shapeCases(template, add);
  return cases.map((c) => ({ ...c, url: urlOf(operation, ownParams(operation, a)) }));
}

function ownParams(operation, a) {
  return Object.fromEntries(operation.pathParams.map((name) => [name, a.ids[recordOfParam(operation, name)]]));
}

/** The operation's URL on company A's own records. */
export const ownUrl = (operation, a) => urlOf(operation, ownParams(operation, a));

function pathCases(operation, template, a, b) {
  const cases = [];
  const own = ownParams(operation, a);
  const request = template === undefined ? {} : { json: template };
  for (const name of operation.pathParams) {
    const record = recordOfParam(operation, name);
    const variants = [
      ...MALFORMED_IDS.map(([label, value]) => ['malformed path id', `{${name}} ${label}`, value, false]),
      ...(record === 'signedLink'
        ? signedLinkVariants(name, own[name], b.ids.signedLink)
        : [
            ['nonexistent path id', `{${name}} nonexistent`, nonexistentLike(own[name]), false],
            ['nonexistent path id', `{${name}} without its prefix`, own[name].replace(/^[a-z]+_/, ''), false],
            ['foreign path id', `{${name}} of company B`, b.ids[record], true],
          ]),
    ];
    for (const [kind, label, value, foreign] of variants) {
      // An id without a prefix is just another valid-looking id where there is none.
      if (label.endsWith('without its prefix') && value === own[name]) continue;
      cases.push({ kind, label, expect: 'refused', foreign, url: urlOf(operation, { ...own, [name]: value }), ...request });
    }
  }
  if (operation.pathParams.length > 1) {
    const all = Object.fromEntries(operation.pathParams.map((name) => [name, b.ids[recordOfParam(operation, name)]]));
    cases.push({ kind: 'foreign path id', label: 'every id of company B', expect: 'refused', foreign: true, url: urlOf(operation, all), ...request });
  }
  return cases;
}

/**
 * Query strings where a query is read (declared parameters), and on every GET. An operation without declared
 * parameters ignores the query, so it may answer 2xx; a write would then go through on A's record, so those
 * are left out.
 */
function queryCases(operation, a, b) {
  const cases = [];
  const url = (query) => urlOf(operation, ownParams(operation, a), query);
  const declared = operation.queryParams.length > 0;
  if (!declared && operation.method !== 'GET') return cases;
  const unknownExpect = declared ? 'refused' : 'any';
  cases.push({ kind: 'query', label: 'unknown parameter', expect: unknownExpect, url: url('drillUnknown=1') });
  cases.push({ kind: 'query', label: '$where=1', expect: unknownExpect, url: url('%24where=1') });
  for (const { name, schema } of operation.queryParams) {
    const add = (label, query, expect = 'refused', foreign = false) => cases.push({ kind: 'query', label: `${name}: ${label}`, expect, foreign, url: url(query) });
    add('[$ne]=x', `${name}[%24ne]=x`);
    add('[$gt]=', `${name}[%24gt]=`);
    add('{"$gt":0}', `${name}=${encodeURIComponent('{"$gt":0}')}`, schema.type === 'string' && !schema.enum ? 'any' : 'refused');
    add('repeated', `${name}=1&${name}=2`, 'any');
    add('8 KB value', `${name}=${'x'.repeat(8 * 1024)}`, 'any');
    add('1 MB value', `${name}=${'x'.repeat(MIB)}`, 'any');
    if (schema.type === 'number' || schema.type === 'integer') {
      for (const value of ['abc', '1.5', '-1', '0', '101', '1e400', '', 'Infinity']) add(`"${value}"`, `${name}=${value}`);
    }
    if (schema.type === 'boolean') for (const value of ['maybe', '2', '']) add(`"${value}"`, `${name}=${value}`);
    if (schema.enum) add('not in the enum', `${name}=drill`);
    if (/Id$/.test(name)) {
      add('id of company B', `${name}=${b.ids.agent}`, 'any');
      add('malformed id', `${name}=abc`, 'any');
    }
  }
  return cases;
}

/**
 * Multipart uploads: send-media (a file for a conversation of the caller's) and Interface B's upload (a file alone,
 * with an optional `type`), told apart by whether the form has a `conversationId`.
 */
function mediaCases(operation, a, b, mediaForm) {
  const toConversation = Boolean(operation.body.schema.properties?.conversationId);
  const own = toConversation ? { conversationId: a.ids.conversation, type: 'image' } : { type: 'image' };
  const png = (fields, file, fileName) => ({ body: mediaForm(fields, file, fileName) });
  const add = (label, request, expect = 'refused', foreign = false) => ({ kind: 'multipart', label, expect, foreign, ...request });
  const conversationCases = toConversation
    ? [
        add('conversationId of company B', png({ ...own, conversationId: b.ids.conversation }), 'refused', true),
        add('conversationId malformed', png({ ...own, conversationId: 'abc' })),
        add('conversationId nonexistent', png({ ...own, conversationId: new ObjectId().toHexString() })),
        add('conversationId {"$ne":null}', png({ ...own, conversationId: '{"$ne":null}' })),
        add('conversationId[$ne] field', png({ type: 'image', 'conversationId[$ne]': 'x' })),
        add('caption of 1 MiB', png({ ...own, caption: 'x'.repeat(MIB) })),
      ]
    : [
        add('conversationId of company B', png({ ...own, conversationId: b.ids.conversation }), 'refused', true),
        add('type {"$ne":null}', png({ type: '{"$ne":null}' })),
        add('type[$ne] field', png({ 'type[$ne]': 'x' })),
        add('unknown field of 1 MiB', png({ ...own, caption: 'x'.repeat(MIB) })),
      ];
  return [
    ...conversationCases,
    add('companyId field of company B', png({ ...own, companyId: b.companyId }), 'refused', true),
    add('no file', png(own, null)),
    add('type not allowed', png({ ...own, type: 'sticker' })),
    add('type does not match the content', png({ ...own, type: 'video' })),
    add('text posing as a PNG', png(own, Buffer.from('not an image at all'), 'fake.png')),
    add('unknown field', png({ ...own, drillUnknown: '1' })),
    add('JSON instead of multipart', { json: own }),
    add('truncated multipart', { body: '--drill\r\ncontent-disposition: form-data; name="conversationId"\r\n\r\nabc', contentType: 'multipart/form-data; boundary=drill' }),
    add('multipart without boundary', { body: 'garbage', contentType: 'multipart/form-data' }),
  ].map((c) => ({ ...c, url: operation.path }));
}

/** Every case of one operation; `template` is its valid JSON body (undefined when it has none). */
export function casesOf(operation, { template, resolve, a, b, mediaForm }) {
  const cases = [];
  if (operation.body?.contentType === 'application/json') cases.push(...bodyCases(operation, template, resolve, a, b));
  if (operation.body?.contentType === 'multipart/form-data') cases.push(...mediaCases(operation, a, b, mediaForm));
  cases.push(...pathCases(operation, template, a, b));
  cases.push(...queryCases(operation, a, b));
  return cases.map((c) => ({ ...c, operation: `${operation.method} ${operation.path}`, method: operation.method, auth: operation.auth }));
}
