// An inbox script on the typed client: `PARLEY_TOKEN=<bearer token> npm run example:client` (see README.md beside it).
import createClient, { type Client } from 'openapi-fetch';
import { pathToFileURL } from 'node:url';
import type { components, paths } from './schema.js';

type Conversation = components['schemas']['ConversationView'];

function fail(what: string, error: { status: number; detail: string }): never {
  throw new Error(`${error.status} ${error.detail} (${what})`);
}

/** Every queued conversation, longest waiting first (`sort=waiting`), page after page (`pageSize`: 1..100). */
async function readTheQueue(parley: Client<paths>, pageSize: number): Promise<Conversation[]> {
  const queue: Conversation[] = [];
  let startAfter: string | undefined;
  do {
    const { data: page, error } = await parley.GET('/v1/conversations', {
      params: { query: { status: 'queued', sort: 'waiting', limit: pageSize, startAfter } },
    });
    if (error) fail('listing the queue', error);
    queue.push(...page.data);
    startAfter = page.nextCursor ?? undefined;
  } while (startAfter);
  return queue;
}

/**
 * The queue as an inbox shows it (who, waiting since when), then the conversation waiting longest: taken by the
 * calling agent (`GET /v1/agents/me`, then assign) and answered with `text`. Answers the queue as it was read.
 */
export async function answerTheQueue(baseUrl: string, token: string, text: string, pageSize = 100): Promise<Conversation[]> {
  const parley = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
  const queue = await readTheQueue(parley, pageSize);
  for (const conversation of queue) {
    const contact = conversation.contact;
    console.log(`${contact?.name ?? contact?.email ?? contact?.phone ?? 'unknown'}, waiting since ${conversation.queuedAt}`);
  }
  const longest = queue[0];
  if (!longest) return queue;
  const { data: me, error: whoAmI } = await parley.GET('/v1/agents/me');
  if (whoAmI) fail('reading the calling agent', whoAmI);
  const assigned = await parley.POST('/v1/conversations/{id}/assign', { params: { path: { id: longest.id } }, body: { agentId: me.id } });
  if (assigned.error) fail(`taking conversation ${longest.id}`, assigned.error);
  const sent = await parley.POST('/v1/conversations/{id}/messages', { params: { path: { id: longest.id } }, body: { text } });
  if (sent.error) fail(`answering conversation ${longest.id}`, sent.error);
  console.log(`Answered ${longest.contact?.name ?? longest.id} as ${me.name}`);
  return queue;
}

// Run as a script (not when imported, as the tests do).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const token = process.env.PARLEY_TOKEN;
  if (!token) {
    console.error('Set PARLEY_TOKEN to a bearer token (npm start prints one), and PARLEY_URL if not http://localhost:3000');
    process.exit(2);
  }
  const text = process.argv[2] ?? 'Thanks for waiting! I am looking into it now.';
  await answerTheQueue(process.env.PARLEY_URL ?? 'http://localhost:3000', token, text).catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
}
