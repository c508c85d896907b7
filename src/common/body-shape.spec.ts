import { describe, expect, it } from '@jest/globals';
import { BadRequestException, UnsupportedMediaTypeException } from '@nestjs/common';
import { bodyShapeProblem, jsonShapeProblem, MAX_BODY_DEPTH, MAX_BODY_KEYS, TOO_DEEP, TOO_MANY_KEYS, verifyJsonBody } from './body-shape.js';

const withKeys = (count: number): Record<string, number> => Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]));

/** `levels` objects nested in one another, the outermost included. */
function nested(levels: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let level = 0; level < levels; level += 1) value = { a: value };
  return value;
}

describe('bodyShapeProblem', () => {
  it('takes what a request needs: primitives, empty bodies, and bodies at the limits', () => {
    for (const body of [undefined, null, 'text', 42, {}, []]) expect(bodyShapeProblem(body)).toBeNull();
    expect(bodyShapeProblem(withKeys(MAX_BODY_KEYS))).toBeNull();
    expect(bodyShapeProblem(nested(MAX_BODY_DEPTH))).toBeNull();
    expect(bodyShapeProblem(nested(MAX_BODY_DEPTH - 1, []))).toBeNull();
  });

  it('counts fields and array items at every level, together', () => {
    expect(bodyShapeProblem(withKeys(MAX_BODY_KEYS + 1))).toBe(TOO_MANY_KEYS);
    expect(bodyShapeProblem({ tags: Array(MAX_BODY_KEYS).fill('x') })).toBe(TOO_MANY_KEYS);
    const spread = { a: withKeys(400), b: [withKeys(300), withKeys(300)] };
    expect(bodyShapeProblem(spread)).toBe(TOO_MANY_KEYS);
    expect(bodyShapeProblem({ a: withKeys(400), b: [withKeys(300), withKeys(295)] })).toBeNull();
  });

  it('refuses objects or arrays nested deeper than the limit, the body being the first level', () => {
    expect(bodyShapeProblem(nested(MAX_BODY_DEPTH + 1))).toBe(TOO_DEEP);
    expect(bodyShapeProblem(nested(MAX_BODY_DEPTH, []))).toBe(TOO_DEEP);
    expect(bodyShapeProblem(JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)))).toBe(TOO_DEEP);
  });

  it('stops at the first entry past the limit: a body of 20 000 keys is read no further than 1 001', () => {
    const target = withKeys(20_000);
    let reads = 0;
    const counted = new Proxy(target, {
      get(object, key, receiver) {
        reads += 1;
        return Reflect.get(object, key, receiver);
      },
    });
    expect(bodyShapeProblem(counted)).toBe(TOO_MANY_KEYS);
    expect(reads).toBeLessThanOrEqual(MAX_BODY_KEYS);
  });

  it('counts a sparse array by its length, without visiting its holes', () => {
    const sparse: unknown[] = [];
    sparse[4_000_000_000] = 'x';
    expect(bodyShapeProblem({ ids: sparse })).toBe(TOO_MANY_KEYS);
  });
});

describe('jsonShapeProblem: the same rule, on the bytes of a JSON body', () => {
  const bytes = (value: unknown) => Buffer.from(JSON.stringify(value));

  /** Bodies on either side of both limits, of every shape a request takes, strings full of what the count looks for. */
  const bodies: unknown[] = [
    {},
    [],
    [[]],
    { a: [] },
    withKeys(MAX_BODY_KEYS),
    withKeys(MAX_BODY_KEYS + 1),
    { tags: Array(MAX_BODY_KEYS - 1).fill('x') },
    { tags: Array(MAX_BODY_KEYS).fill('x') },
    Array(MAX_BODY_KEYS).fill(null),
    Array(MAX_BODY_KEYS + 1).fill(0),
    { a: withKeys(400), b: [withKeys(300), withKeys(295)] },
    { a: withKeys(400), b: [withKeys(300), withKeys(300)] },
    { steps: Array.from({ length: 333 }, () => ({ type: 'send_message', text: 'x' })) },
    { steps: Array.from({ length: 334 }, () => ({ type: 'send_message', text: 'x' })) },
    nested(MAX_BODY_DEPTH),
    nested(MAX_BODY_DEPTH + 1),
    nested(MAX_BODY_DEPTH - 1, []),
    nested(MAX_BODY_DEPTH, []),
    nested(MAX_BODY_DEPTH, [[]]),
    { 'a:b,c[{': '"}],:\\', text: 'x\\"y:{[,'.repeat(500), tricky: ['", [1, {"a": 2}]', '\\', '\\\\"'] },
    Object.fromEntries(Array.from({ length: MAX_BODY_KEYS }, (_, i) => [`k${i}`, 'a,b:c"[{'])),
  ];

  it.each(bodies.map((body, index) => [index, body]))('body %i: the same answer as on the parsed body', (_index, body) => {
    expect(jsonShapeProblem(bytes(body))).toBe(bodyShapeProblem(body));
    // white space between tokens does not count
    expect(jsonShapeProblem(Buffer.from(JSON.stringify(body, null, 2)))).toBe(bodyShapeProblem(body));
  });

  it('refuses the 979 KB body of 90 000 keys, and 100 000 nested arrays, without parsing them', () => {
    expect(jsonShapeProblem(bytes(withKeys(90_000)))).toBe(TOO_MANY_KEYS);
    expect(jsonShapeProblem(Buffer.from('['.repeat(100_000) + ']'.repeat(100_000)))).toBe(TOO_DEEP);
  });

  it('is the JSON parser verify step: 400 for either, 415 for a charset other than UTF-8', () => {
    expect(() => verifyJsonBody({}, {}, bytes(withKeys(MAX_BODY_KEYS + 1)), 'utf-8')).toThrow(BadRequestException);
    expect(() => verifyJsonBody({}, {}, bytes(withKeys(3)), 'utf-16le')).toThrow(UnsupportedMediaTypeException);
    expect(() => verifyJsonBody({}, {}, bytes(withKeys(3)), 'utf-8')).not.toThrow();
  });
});
