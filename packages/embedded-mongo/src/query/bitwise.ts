/**
 * `$bitsAllSet`, `$bitsAnySet`, `$bitsAllClear`, `$bitsAnyClear` as MongoDB defines them: on integral numbers (as
 * 64-bit two's complement, sign-extended beyond bit 63) and on BinData (bit 0 is the lowest bit of the first byte).
 * The mask is a list of bit positions, a non-negative integer or a BinData. mingo only knows 32-bit numbers.
 */
import * as queryOperators from 'mingo/operators/query';
import { toNumber, typeRank } from '../bson-values.js';
import { badValue } from '../errors.js';
import { pathValues } from './paths.js';

type QueryOp = typeof queryOperators.$eq;

const bytesOf = (v: unknown): Uint8Array | null => {
  const b = v as { _bsontype?: string; value?: () => Uint8Array };
  if (b?._bsontype === 'Binary') return b.value!();
  return v instanceof Uint8Array ? v : null;
};

/** Bit positions of a mask. */
function maskPositions(op: string, mask: unknown): number[] {
  if (Array.isArray(mask)) {
    for (const p of mask) if (typeof p !== 'number' || !Number.isInteger(p) || p < 0) throw badValue(`${op} bit positions must be non-negative integers, got ${String(p)}`);
    return mask as number[];
  }
  const bytes = bytesOf(mask);
  if (bytes) return setBits(bytes);
  if (typeRank(mask) === 3) {
    const n = toNumber(mask);
    if (!Number.isInteger(n) || n < 0) throw badValue(`${op} bitmask must be a non-negative integer, got ${String(mask)}`);
    const big = BigInt(n);
    const out: number[] = [];
    for (let i = 0; i < 64; i++) if ((big >> BigInt(i)) & 1n) out.push(i);
    return out;
  }
  throw badValue(`${op} takes an Array, a number, or a BinData but received: ${String(mask)}`);
}

function setBits(bytes: Uint8Array): number[] {
  const out: number[] = [];
  for (let i = 0; i < bytes.length * 8; i++) if ((bytes[i >> 3] >> (i & 7)) & 1) out.push(i);
  return out;
}

/** A function answering whether bit `i` of `v` is set, or null when `v` is not something bits apply to. */
function bitReader(v: unknown): ((i: number) => boolean) | null {
  const bytes = bytesOf(v);
  if (bytes) return (i) => i < bytes.length * 8 && ((bytes[i >> 3] >> (i & 7)) & 1) === 1;
  if (typeRank(v) !== 3) return null;
  const n = (v as { _bsontype?: string })?._bsontype === 'Long' ? BigInt(String(v)) : toNumber(v);
  if (typeof n === 'number' && (!Number.isInteger(n) || Math.abs(n) > 2 ** 63)) return null;
  const big = BigInt.asUintN(64, BigInt(n));
  const negative = big >> 63n === 1n;
  return (i) => (i >= 64 ? negative : ((big >> BigInt(i)) & 1n) === 1n);
}

function bitwise(op: string, accept: (bits: boolean[]) => boolean): QueryOp {
  return (selector, mask) => {
    const positions = maskPositions(op, mask);
    const parts = selector.split('.');
    return (obj) =>
      pathValues(obj, parts).values.some((v) => {
        const read = bitReader(v);
        return read !== null && accept(positions.map(read));
      });
  };
}

export const bitwiseOperators = {
  $bitsAllSet: bitwise('$bitsAllSet', (bits) => bits.every(Boolean)),
  $bitsAnySet: bitwise('$bitsAnySet', (bits) => bits.some(Boolean)),
  $bitsAllClear: bitwise('$bitsAllClear', (bits) => bits.every((b) => !b)),
  $bitsAnyClear: bitwise('$bitsAnyClear', (bits) => bits.some((b) => !b)),
};
