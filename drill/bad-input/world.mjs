// Two companies with one record of every kind, built through the API: A is the caller, B the one it must not reach.
import { randomUUID } from 'node:crypto';
import { FormData } from 'undici';
import { createApiKey, registerCompany } from '../lib/fixtures.mjs';

/** A 1×1 PNG: the smallest file send-media accepts. */
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

/** The multipart body of send-media; `fields` and `file` as given (strings and a Buffer). */
export function mediaForm(fields, file = PNG, fileName = 'drill.png') {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (file) form.append('file', new Blob([file], { type: 'image/png' }), fileName);
  return form;
}

/** Every scope an API key can hold (src/auth/auth-principal.ts API_KEY_SCOPES): the key reaches every Interface B route. */
export const API_KEY_SCOPES = ['webhooks:manage', 'messages:write', 'events:read', 'media:read', 'templates:manage'];

/** The key of the channel record each company gets: per company, so both companies use the same one. */
export const CHANNEL_KEY = 'drill-channel';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Builds a company named `label-<random>` with: a second agent, an API key with every scope, a contact, a
 * conversation with an inbound and an outbound message, a media message (and the signed link of its file), a flow, a
 * webhook with a delivery, a canned response, a channel record, a message template on it, an upload through
 * Interface B, a second conversation closed with CSAT enabled that awaits its rating, a third one left open (the
 * drill closes the first one), and (last, so that no
 * conversation takes it and no timer of it runs during the drill) an SLA policy. Answers its ids by kind
 * (`ids.contact`, ...) and credentials; every name carries the company's label, so that another company's responses
 * can be searched for it.
 */
export async function buildCompany(client, receiver, label, phone) {
  const name = `${label}-${randomUUID().slice(0, 8)}`;
  const company = await registerCompany(client, name);
  const { token } = company;
  const agent = await client.expect(201, 'POST', '/v1/agents', {
    token,
    json: { name: `${name} Agent`, email: `agent-${name}@drill.example`.toLowerCase(), role: 'agent', status: 'online' },
  });
  const apiKey = await createApiKey(client, company, API_KEY_SCOPES, `${name} key`);
  const contact = await client.expect(201, 'POST', '/v1/contacts', {
    token,
    json: { name: `${name} Contact`, email: `contact-${name}@drill.example`.toLowerCase(), tags: [name] },
  });
  const webhook = await client.expect(201, 'POST', '/v1/webhooks', {
    token,
    json: { name: `${name} hook`, url: receiver.url(`/${name}`), events: ['message.received', 'message.sent'] },
  });
  const inbound = await client.expect(201, 'POST', '/api/external/messages', {
    apiKey: apiKey.key,
    json: { from: { phone, name: `${name} Caller` }, text: `${name} says hello` },
  });
  const conversationId = inbound.data.conversation.id;
  const outbound = await client.expect(201, 'POST', `/v1/conversations/${conversationId}/messages`, { token, json: { text: `${name} answers` } });
  const media = await client.expect(201, 'POST', '/v1/messages/send-media', {
    token,
    body: mediaForm({ conversationId, type: 'image', caption: `${name} picture` }),
  });
  const signedLink = media.media.downloadUrl?.split('/').pop();
  if (!signedLink) throw new Error(`bad-input drill: the send-media answer carries no media.downloadUrl: ${JSON.stringify(media.media)}`);
  const flow = await client.expect(201, 'POST', '/v1/flows', {
    token,
    json: { name: `${name} flow`, trigger: { type: 'manual' }, steps: [{ type: 'send_message', text: `${name} flow says hi` }] },
  });
  const cannedResponse = await client.expect(201, 'POST', '/v1/canned-responses', {
    token,
    json: { shortCode: `drill-${label}`.toLowerCase(), title: `${name} reply`, content: `Hi {{contact.name}}, ${name} here. {{agent.name}}` },
  });
  // No reply window (type other): the conversations' messages go through as before.
  const channel = await client.expect(201, 'POST', '/v1/channels', {
    token,
    json: { key: CHANNEL_KEY, type: 'other', name: `${name} channel`, address: `${name}@drill.example`.toLowerCase(), replyWindowHours: null },
  });
  const messageTemplate = await client.expect(201, 'POST', '/v1/message-templates', {
    token,
    json: { channel: CHANNEL_KEY, name: `drill_${label}`.toLowerCase(), language: 'en', category: 'utility', body: `${name}: hello {{1}}, order {{2}}` },
  });
  const upload = await client.expect(201, 'POST', '/api/external/media', { apiKey: apiKey.key, body: mediaForm({ type: 'image' }, PNG, `${name}.png`) });
  const surveyed = await awaitingRating(client, { name, token, apiKey: apiKey.key, phone: otherPhone(phone, 5) });
  const open = await client.expect(201, 'POST', '/api/external/messages', {
    apiKey: apiKey.key,
    json: { from: { phone: otherPhone(phone, 7), name: `${name} Waiter` }, text: `${name} is still waiting` },
  });
  const slaPolicy = await client.expect(201, 'POST', '/v1/sla-policies', {
    token,
    json: {
      name: `${name} SLA`,
      conditions: { priorities: ['high'], channels: [CHANNEL_KEY] },
      firstResponseSeconds: 3600,
      nextResponseSeconds: 3600,
      resolutionSeconds: 86_400,
      warnBeforeSeconds: 600,
    },
  });
  const deliveries = await client.expect(200, 'GET', `/v1/webhooks/${webhook.id}/deliveries`, { token });
  return {
    name,
    companyId: company.companyId,
    token,
    apiKey: apiKey.key,
    webhookSecret: webhook.secret,
    ids: {
      agent: agent.id,
      admin: company.agentId,
      apiKey: apiKey.id,
      contact: contact.id,
      conversation: conversationId,
      surveyedConversation: surveyed,
      openConversation: open.data.conversation.id,
      message: outbound.id,
      media: media.media.id,
      signedLink,
      upload: upload.data.id,
      flow: flow.id,
      webhook: webhook.id,
      delivery: deliveries.data[0].id,
      cannedResponse: cannedResponse.id,
      channel: channel.id,
      messageTemplate: messageTemplate.id,
      slaPolicy: slaPolicy.id,
    },
  };
}

/** `phone` with its last digit moved by `step`: another caller of the same company. */
const otherPhone = (phone, step) => phone.replace(/\d$/, (digit) => String((Number(digit) + step) % 10));

/**
 * A second conversation (another caller), closed with CSAT enabled: it awaits its rating once the survey consumer
 * has sent the survey. Answers its id.
 */
async function awaitingRating(client, { name, token, apiKey, phone }) {
  await client.expect(200, 'PATCH', '/v1/settings', { token, json: { csat: { enabled: true, message: `${name}: rate us, 1 to 5` } } });
  const inbound = await client.expect(201, 'POST', '/api/external/messages', {
    apiKey,
    json: { from: { phone, name: `${name} Rater` }, text: `${name} needs help` },
  });
  const id = inbound.data.conversation.id;
  await client.expect(201, 'POST', `/v1/conversations/${id}/messages`, { token, json: { text: `${name} helps` } });
  await client.expect(200, 'POST', `/v1/conversations/${id}/close`, { token, json: {} });
  for (let attempt = 0; attempt < 200; attempt += 1) {
    // The consumer marks the conversation as awaiting its rating, then sends the survey (the view's `csat` stays
    // null until a rating): the bot's message says both are done.
    const messages = await client.expect(200, 'GET', `/v1/conversations/${id}/messages`, { token });
    if (messages.data.some((message) => message.senderType === 'bot')) return id;
    await sleep(100);
  }
  throw new Error(`bad-input drill: conversation ${id} of ${name} never came to await a rating`);
}
