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

/** Decimal operations: `$inc`/`$add` (a + b), `$subtract` (a - b), `$mul`/`$multiply` (a × b), `$divide` (a ÷ b, b not zero). */
export type DecimalOp = '$inc' | '$mul' | '$subtract' | '$divide';

/** `op` where at least one operand is a Decimal128; the result is a Decimal128 (exact, then rounded to 34 digits). */
export function decimalArithmetic(op: DecimalOp, a: unknown, b: unknown): Decimal128 {
  const x = parse(decimalText(a));
  const y = parse(decimalText(b));
  if (!x || !y) {
    // NaN or an infinity takes part: IEEE's special-value rules, which doubles follow too.
    const [p, q] = [toNumber(a), toNumber(b)];
    const r = op === '$inc' ? p + q : op === '$subtract' ? p - q : op === '$mul' ? p * q : p / q;
    return Decimal128.fromString(String(r));
  }
  let result: Finite;
  if (op === '$mul') {
    result = { coefficient: x.coefficient * y.coefficient, exponent: x.exponent + y.exponent, negative: x.negative !== y.negative };
  } else if (op === '$divide') {
    result = divide(x, y);
  } else {
    const exponent = Math.min(x.exponent, y.exponent);
    const other = op === '$subtract' ? -signed(y) : signed(y);
    const sum = signed(x) * 10n ** BigInt(x.exponent - exponent) + other * 10n ** BigInt(y.exponent - exponent);
    result = { coefficient: sum < 0n ? -sum : sum, exponent, negative: sum < 0n };
  }
  const r = round(result);
  return Decimal128.fromString(`${r.negative ? '-' : ''}${r.coefficient}E${r.exponent}`);
}

/**
 * x ÷ y (y not zero): exact when the quotient fits in 34 digits, at the exponent closest to IEEE's ideal one (x's
 * minus y's: `1.00 / 2` is `0.50`); otherwise 35 digits and a sticky one, which `round` rounds half-even.
 */
function divide(x: Finite, y: Finite): Finite {
  const negative = x.negative !== y.negative;
  if (x.coefficient === 0n) return { coefficient: 0n, exponent: x.exponent - y.exponent, negative };
  let scale = Math.max(0, DIGITS + 1 + y.coefficient.toString().length - x.coefficient.toString().length);
  let q = (x.coefficient * 10n ** BigInt(scale)) / y.coefficient;
  const rest = (x.coefficient * 10n ** BigInt(scale)) % y.coefficient;
  if (rest === 0n) {
    while (scale > 0 && q % 10n === 0n) {
      q /= 10n;
      scale--;
    }
  } else {
    q = q * 10n + 1n;
    scale++;
  }
  return { coefficient: q, exponent: x.exponent - y.exponent - scale, negative };
}
