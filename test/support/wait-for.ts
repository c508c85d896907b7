import { expect } from '@jest/globals';
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

/**
 * Polls `probe` until it answers something truthy, and answers that; fails with `message` after
 * `timeoutMs`. For conditions reached asynchronously (a webhook delivered), instead of fixed sleeps.
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  { timeoutMs = 5000, intervalMs = 20, message = 'condition' }: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${message}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Reads `read()` until it deep-equals `expected` (e.g. clean-up that finishes just after a response), then asserts it:
 * a mismatch past `timeoutMs` fails with the last value read.
 */
export async function expectEventually<T>(read: () => Promise<T>, expected: T, timeoutMs = 2000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (JSON.stringify(value) !== JSON.stringify(expected) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    value = await read();
  }
  expect(value).toEqual(expected);
}
