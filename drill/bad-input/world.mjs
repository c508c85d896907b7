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

/**
 * Builds a company named `label-<random>` with: a second agent, an API key with both scopes, a contact, a
 * conversation with an inbound and an outbound message, a media message, a flow, and a webhook with a delivery.
 * Answers its ids by kind (`ids.contact`, ...) and credentials; every name carries the company's label, so
 * that another company's responses can be searched for it.
 */
export async function buildCompany(client, receiver, label, phone) {
  const name = `${label}-${randomUUID().slice(0, 8)}`;
  const company = await registerCompany(client, name);
  const { token } = company;
  const agent = await client.expect(201, 'POST', '/v1/agents', {
    token,
    json: { name: `${name} Agent`, email: `agent-${name}@drill.example`.toLowerCase(), role: 'agent', status: 'online' },
  });
  const apiKey = await createApiKey(client, company, ['messages:write', 'webhooks:manage'], `${name} key`);
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
  const flow = await client.expect(201, 'POST', '/v1/flows', {
    token,
    json: { name: `${name} flow`, trigger: { type: 'manual' }, steps: [{ type: 'send_message', text: `${name} flow says hi` }] },
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
      message: outbound.id,
      media: media.media.id,
      flow: flow.id,
      webhook: webhook.id,
      delivery: deliveries.data[0].id,
    },
  };
}
