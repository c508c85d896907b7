import pMap from 'p-map';

/** Conversations of a batch that a consumer handles at once. */
export const CONVERSATIONS_AT_ONCE = 8;

/** A batch's events by conversation (`idOf`), each conversation's in log order; an event without one is left out. */
export function byConversation<E>(events: readonly E[], idOf: (event: E) => string | undefined): Map<string, E[]> {
  const groups = new Map<string, E[]>();
  for (const event of events) {
    const id = idOf(event);
    if (id === undefined) continue;
    const group = groups.get(id);
    if (group) group.push(event);
    else groups.set(id, [event]);
  }
  return groups;
}

/**
 * Calls `handle` for each conversation's events, CONVERSATIONS_AT_ONCE conversations side by side: they are
 * independent, and a consumer's turn waits on the database far more than it computes. Every conversation is tried;
 * the failures are thrown together at the end (an AggregateError, whose messages the consumer records), and the
 * consumer retries the batch, so `handle` must be safe to run again.
 */
export async function eachConversation<E>(groups: Map<string, E[]>, handle: (conversationId: string, events: E[]) => Promise<void>): Promise<void> {
  await pMap(groups, ([id, events]) => handle(id, events), { concurrency: CONVERSATIONS_AT_ONCE, stopOnError: false });
}
