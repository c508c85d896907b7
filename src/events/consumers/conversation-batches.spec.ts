import { byConversation, CONVERSATIONS_AT_ONCE, eachConversation } from './conversation-batches.js';

interface Event {
  id: number;
  conversation?: string;
}

describe('a batch by conversation', () => {
  it('groups events by conversation in log order, leaving out those of none', () => {
    const events: Event[] = [{ id: 1, conversation: 'a' }, { id: 2, conversation: 'b' }, { id: 3 }, { id: 4, conversation: 'a' }];
    const groups = byConversation(events, (event) => event.conversation);
    expect([...groups].map(([id, group]) => [id, group.map((event) => event.id)])).toEqual([
      ['a', [1, 4]],
      ['b', [2]],
    ]);
  });

  it('handles conversations side by side, at most CONVERSATIONS_AT_ONCE at a time', async () => {
    const groups = new Map(Array.from({ length: 20 }, (_, index) => [`c${index}`, [index]]));
    let running = 0;
    let most = 0;
    const handled: string[] = [];
    // Each handler waits until CONVERSATIONS_AT_ONCE run together: serial handling never gets there (the test times
    // out), unbounded handling goes past it.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    await eachConversation(groups, async (id) => {
      running += 1;
      most = Math.max(most, running);
      if (running === CONVERSATIONS_AT_ONCE) release();
      await released;
      handled.push(id);
      running -= 1;
    });
    expect(most).toBe(CONVERSATIONS_AT_ONCE);
    expect(handled.sort()).toEqual([...groups.keys()].sort());
  });

  it('tries every conversation when one fails, then throws every failure together', async () => {
    const groups = new Map([
      ['a', [1]],
      ['b', [2]],
      ['c', [3]],
    ]);
    const handled: string[] = [];
    const run = eachConversation(groups, async (id) => {
      if (id !== 'b') {
        handled.push(id);
        return;
      }
      throw new Error('b failed');
    });
    await expect(run).rejects.toBeInstanceOf(AggregateError);
    await expect(run).rejects.toMatchObject({ errors: [new Error('b failed')] });
    expect(handled).toEqual(['a', 'c']);
  });
});
