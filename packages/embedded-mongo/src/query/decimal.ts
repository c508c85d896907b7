/**
 * Decimal128 arithmetic for `$inc` and `$mul`, as MongoDB does it: exact decimal sums and products (IEEE 754-2008:
 * a sum keeps the smaller exponent, a product adds them, so `1.50 + 1` is `2.50` and `1.5 × 2` is `3.0`), rounded
 * half-even to 34 significant digits. The other operand becomes a decimal first: an int32 or int64 exactly, a double
 * with 15 significant digits (MongoDB's conversion).
 */
import { Decimal128 } from 'bson';
import { toNumber } from '../bson-values.js';

const DIGITS = 34;

/** A finite decimal: coefficient × 10^exponent. */
interface Finite {
  coefficient: bigint;
  exponent: number;
  negative: boolean;
}

const isDecimal = (v: unknown): v is Decimal128 => (v as { _bsontype?: string })?._bsontype === 'Decimal128';
const isDouble = (v: unknown) => (v as { _bsontype?: string })?._bsontype === 'Double' || (typeof v === 'number' && !Number.isInteger(v));

/** A finite decimal from its string form, or null for NaN and the infinities. */
function parse(text: string): Finite | null {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:E([+-]?\d+))?$/i.exec(text);
  if (!match) return null;
  const [, sign, whole, fraction = '', exponent = '0'] = match;
  return { coefficient: BigInt(`${whole}${fraction}` || '0'), exponent: Number(exponent) - fraction.length, negative: sign === '-' };
}

function decimalText(v: unknown): string {
  if (isDecimal(v)) return v.toString();
  if (isDouble(v)) {
    const n = toNumber(v);
    return Number.isFinite(n) ? n.toPrecision(15) : String(n);
  }
  return String(v); // int32 or Long: exact
}

/** Rounds half-even to at most 34 significant digits. */
function round({ coefficient, exponent, negative }: Finite): Finite {
  let digits = coefficient.toString().length;
  while (digits > DIGITS) {
    const scale = 10n ** BigInt(digits - DIGITS);
    let kept = coefficient / scale;
    const rest = coefficient % scale;
    const half = scale / 2n;
    if (rest > half || (rest === half && kept % 2n === 1n)) kept += 1n;
    coefficient = kept;
    exponent += digits - DIGITS;
    digits = coefficient.toString().length;
  }
  return { coefficient, exponent, negative };
}

const signed = (f: Finite) => (f.negative ? -f.coefficient : f.coefficient);

/** `$inc` (a + b) or `$mul` (a × b) where at least one operand is a Decimal128; the result is a Decimal128. */
export function decimalArithmetic(op: '$inc' | '$mul', a: unknown, b: unknown): Decimal128 {
  const x = parse(decimalText(a));
  const y = parse(decimalText(b));
  if (!x || !y) {
    // NaN or an infinity takes part: IEEE's special-value rules, which doubles follow too.
    const r = op === '$inc' ? toNumber(a) + toNumber(b) : toNumber(a) * toNumber(b);
    return Decimal128.fromString(String(r));
  }
  let result: Finite;
  if (op === '$mul') {
    result = { coefficient: x.coefficient * y.coefficient, exponent: x.exponent + y.exponent, negative: x.negative !== y.negative };
  } else {
    const exponent = Math.min(x.exponent, y.exponent);
    const sum = signed(x) * 10n ** BigInt(x.exponent - exponent) + signed(y) * 10n ** BigInt(y.exponent - exponent);
    result = { coefficient: sum < 0n ? -sum : sum, exponent, negative: sum < 0n };
  }
  const r = round(result);
  return Decimal128.fromString(`${r.negative ? '-' : ''}${r.coefficient}E${r.exponent}`);
}
