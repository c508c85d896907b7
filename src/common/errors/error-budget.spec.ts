import { describe, expect, it } from '@jest/globals';
import { boundErrorWords, clipForBody, MAX_ERROR_BODY_BYTES, MAX_LISTED_PROBLEMS } from './error-budget.js';

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

/** What problem details would weigh with these words: `detail` joins the messages, `message` lists them, `errors` repeats them. */
function problemBodyBytes(words: ReturnType<typeof boundErrorWords>): number {
  const detail = Array.isArray(words.message) ? words.message.join('; ') : words.message;
  const fixed = { type: 'about:blank', title: 'Bad Request', status: 400, instance: 'x'.repeat(200), statusCode: 400, error: 'Bad Request', requestId: 'r'.repeat(128) };
  return jsonBytes({ ...fixed, detail, message: words.message, errors: words.errors });
}

describe('clipForBody', () => {
  it('keeps short text as it is, and cuts long text with an ellipsis within the bytes it is given', () => {
    expect(clipForBody('email must be an email', 100)).toBe('email must be an email');
    const clipped = clipForBody('x'.repeat(1000), 100);
    expect(clipped.endsWith('…')).toBe(true);
    expect(jsonBytes(clipped)).toBeLessThanOrEqual(100 + 2);
  });

  it('counts what JSON escapes and what UTF-8 widens, and never splits a surrogate pair', () => {
    for (const text of ['\u0001'.repeat(500), '"'.repeat(500), 'é'.repeat(500), '語'.repeat(500), '😀'.repeat(500), `a${'😀'.repeat(500)}`]) {
      const clipped = clipForBody(text, 100);
      expect(jsonBytes(clipped)).toBeLessThanOrEqual(100 + 2);
      // no half of a surrogate pair left alone
      expect(clipped).not.toMatch(/\p{Cs}/u);
    }
  });
});

describe('boundErrorWords', () => {
  const problems = (count: number, text: (i: number) => string) =>
    Array.from({ length: count }, (_, i) => ({ field: text(i), message: `${text(i)} should not exist` }));

  it(`lists ${MAX_LISTED_PROBLEMS} problems at most, and says how many more there were`, () => {
    const errors = problems(90_000, (i) => `k${i}`);
    const bounded = boundErrorWords({ message: errors.map((problem) => problem.message), errors });
    expect(bounded.errors).toHaveLength(MAX_LISTED_PROBLEMS);
    expect(bounded.message).toHaveLength(MAX_LISTED_PROBLEMS + 1);
    expect((bounded.message as string[]).at(-1)).toBe('and 89980 more problems, not listed');
    expect(problemBodyBytes(bounded)).toBeLessThanOrEqual(MAX_ERROR_BODY_BYTES);
  });

  it('keeps a body under 10 KB whatever the fields are named: long names, escapes, wide characters', () => {
    for (const name of ['x'.repeat(900_000), '\u0000'.repeat(2000), '😀'.repeat(2000), '"\\'.repeat(2000)]) {
      const errors = problems(999, (i) => `${name}${i}`);
      const bounded = boundErrorWords({ message: errors.map((problem) => problem.message), errors });
      expect(problemBodyBytes(bounded)).toBeLessThanOrEqual(MAX_ERROR_BODY_BYTES);
      expect(bounded.errors!.length).toBeGreaterThan(0);
    }
    const sole = boundErrorWords({ message: `Field name "${'y'.repeat(900_000)}" is not allowed` });
    expect(problemBodyBytes(sole)).toBeLessThanOrEqual(MAX_ERROR_BODY_BYTES);
  });

  it('leaves an ordinary error as it is', () => {
    const errors = [{ field: 'email', message: 'email must be an email' }];
    expect(boundErrorWords({ message: ['email must be an email'], errors })).toEqual({ message: ['email must be an email'], errors });
    expect(boundErrorWords({ message: 'Conversation 1 not found' })).toEqual({ message: 'Conversation 1 not found', errors: undefined });
  });
});
