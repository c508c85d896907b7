import createClient from 'openapi-fetch';
import type { components, paths } from './schema.js';

type Conversation = components['schemas']['ConversationView'];

/** The queue of a company as an inbox shows it (who, since when), and a first answer to the longest-waiting one. */
export async function answerTheQueue(baseUrl: string, token: string, text: string): Promise<Conversation[]> {
  const parley = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
  const { data: page, error } = await parley.GET('/v1/conversations', { params: { query: { status: 'queued', limit: 100 } } });
  if (error) throw new Error(`${error.status} ${error.detail}`);
  for (const conversation of page.data) {
    console.log(`${conversation.contact?.name ?? conversation.contact?.email ?? 'unknown'}, waiting since ${conversation.queuedAt}`);
  }
  const oldest = page.data.at(-1);
  if (oldest) {
    const sent = await parley.POST('/v1/conversations/{id}/messages', { params: { path: { id: oldest.id } }, body: { text } });
    if (sent.error) throw new Error(`${sent.error.status} ${sent.error.detail}`);
  }
  return page.data;
}
