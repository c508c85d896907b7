import { COMMON_WORD, phone } from './seed.mjs';

/** The inbox page of the issue: two statuses, most recent activity first, with lastMessage and unreadCount. */
export const INBOX_PATH = '/v1/conversations?status=queued,human&sort=lastActivity&limit=50';

const json = { 'content-type': 'application/json' };

/**
 * The requests measured under load, against the seeded companies (see seed.mjs). Each is compared with
 * bare servers answering the same bytes (`baseline`: whose answer they serve; the 100k page shares the
 * 1k page's, which has the same shape and size).
 */
export function appScenarios({ small, large, smallData, inboxCompany }) {
  const bearer = (company) => ({ authorization: `Bearer ${company.token}` });
  let next = 0;
  return [
    { name: 'settings', label: 'GET /v1/settings', path: '/v1/settings', headers: bearer(small) },
    { name: 'conversations', label: 'GET /v1/conversations?limit=50', path: '/v1/conversations?limit=50', headers: bearer(small) },
    {
      name: 'conversations-large',
      label: 'GET /v1/conversations?limit=50 (100k)',
      path: '/v1/conversations?limit=50',
      headers: bearer(large),
      baseline: 'conversations',
    },
    {
      name: 'messages',
      label: 'GET /v1/conversations/:id/messages?limit=50',
      path: `/v1/conversations/${smallData.threadId}/messages?limit=50`,
      headers: bearer(small),
    },
    {
      name: 'send',
      label: 'POST /v1/conversations/:id/messages',
      method: 'POST',
      path: `/v1/conversations/${smallData.replyConversationId}/messages`,
      headers: { ...bearer(small), ...json },
      body: JSON.stringify({ text: 'Thanks for waiting: your refund was approved today.' }),
    },
    {
      name: 'inbound',
      label: 'POST /api/external/messages',
      method: 'POST',
      path: '/api/external/messages',
      headers: { 'x-api-key': small.apiKey, ...json },
      // Each request from the next of the seeded contacts, so lookups spread over them as real traffic does.
      body: () => JSON.stringify({ from: { phone: phone(415, next++ % smallData.phones) }, text: 'Is my order on its way?', channel: 'whatsapp' }),
    },
    { name: 'inbox', label: 'GET inbox page (1k): queued,human by lastActivity', path: INBOX_PATH, headers: bearer(inboxCompany) },
    { name: 'inbox-large', label: 'GET inbox page (100k)', path: INBOX_PATH, headers: bearer(large), baseline: 'inbox' },
    { name: 'counts-large', label: 'GET /v1/conversations/counts (100k)', path: '/v1/conversations/counts', headers: bearer(large) },
    {
      name: 'search-large',
      label: `GET /v1/messages/search?q=${COMMON_WORD} (200k msgs)`,
      path: `/v1/messages/search?q=${COMMON_WORD}`,
      headers: bearer(large),
      needsMessages: true,
    },
  ];
}

/** autocannon options for a scenario: a fixed request, or one whose body is made per request. */
export function requestOptions(scenario) {
  const { method = 'GET', path, headers, body } = scenario;
  if (typeof body !== 'function') return { method, headers, body };
  return { requests: [{ method, path, headers, setupRequest: (request) => ({ ...request, body: body() }) }] };
}
