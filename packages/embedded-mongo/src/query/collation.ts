/**
 * Collations: MongoDB's ICU collation options mapped onto `Intl.Collator` (Node ships full ICU). Strength 1 ignores
 * case and accents, strength 2 ignores case, strength 3 (the default) compares both; `caseLevel`, `caseFirst`,
 * `numericOrdering` and `alternate: 'shifted'` are honoured. `{ locale: 'simple' }` (or no collation) is binary
 * comparison and yields no collator. A collation is kept as the plain document the client sent.
 */
import type { Document } from 'bson';
import { isPlainObject } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';

/**
 * A parsed collation. Its `locale`, `strength`, `caseLevel`, `caseFirst`, `numericOrdering` and `alternate` fields are
 * what mingo's `$sort` reads from its `collation` option, so a Collator is passed to mingo as that option as is.
 */
export interface Collator {
  compare(a: string, b: string): number;
  /** The collation as listIndexes/listCollections report it, defaults filled in. */
  spec: Document;
  locale: string;
  strength: number;
  caseLevel: boolean;
  caseFirst: string;
  numericOrdering: boolean;
  alternate: string;
}

const FIELDS: Record<string, string> = {
  locale: 'string',
  caseLevel: 'boolean',
  caseFirst: 'string',
  strength: 'number',
  numericOrdering: 'boolean',
  alternate: 'string',
  maxVariable: 'string',
  normalization: 'boolean',
  backwards: 'boolean',
  version: 'string',
};

const cache = new Map<string, Collator>();

/** MongoDB locales are ICU ids (`en_US`, `de@collation=phonebook`); Intl wants BCP 47 tags. */
function bcp47(locale: string): string {
  const [base] = locale.split('@');
  return base.replace(/_/g, '-');
}

/** Validates a collation document; null for none or `simple`. */
export function parseCollation(value: unknown): Collator | null {
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw new MongoCommandError(14, `collation must be an object, not ${typeof value}`);
  const spec = value as Document;
  for (const [k, v] of Object.entries(spec)) {
    if (!(k in FIELDS)) throw new MongoCommandError(40415, `BSON field 'collation.${k}' is an unknown field.`);
    if (typeof v !== FIELDS[k]) throw new MongoCommandError(14, `BSON field 'collation.${k}' is the wrong type '${typeof v}', expected type '${FIELDS[k]}'`);
  }
  if (typeof spec.locale !== 'string') throw new MongoCommandError(40414, "BSON field 'collation.locale' is missing but a required field");
  if (spec.locale === 'simple') {
    if (Object.keys(spec).length > 1) throw badValue('A collation with locale "simple" cannot have other options');
    return null;
  }
  const key = JSON.stringify(spec);
  const hit = cache.get(key);
  if (hit) return hit;
  const tag = bcp47(spec.locale);
  if (tag !== 'root' && Intl.Collator.supportedLocalesOf(tag).length === 0) throw badValue(`Field 'locale' is invalid in: ${JSON.stringify(spec)}`);
  const strength = spec.strength ?? 3;
  if (![1, 2, 3, 4, 5].includes(strength)) throw badValue(`Field 'strength' must be an integer 1 through 5. Got: ${strength}`);
  if (spec.caseFirst !== undefined && !['upper', 'lower', 'off'].includes(spec.caseFirst)) throw badValue(`Field 'caseFirst' must be 'upper', 'lower' or 'off'. Got: ${spec.caseFirst}`);
  if (spec.alternate !== undefined && !['non-ignorable', 'shifted'].includes(spec.alternate)) throw badValue(`Field 'alternate' must be 'non-ignorable' or 'shifted'. Got: ${spec.alternate}`);
  const caseLevel = spec.caseLevel === true;
  const sensitivity = strength === 1 ? (caseLevel ? 'case' : 'base') : strength === 2 && !caseLevel ? 'accent' : 'variant';
  const intl = new Intl.Collator(tag === 'root' ? 'und' : tag, {
    sensitivity,
    caseFirst: spec.caseFirst === 'upper' || spec.caseFirst === 'lower' ? spec.caseFirst : 'false',
    numeric: spec.numericOrdering === true,
    ignorePunctuation: spec.alternate === 'shifted',
    usage: 'sort',
  });
  const collator: Collator = {
    compare: intl.compare,
    locale: tag === 'root' ? 'und' : tag,
    strength,
    caseLevel,
    caseFirst: spec.caseFirst ?? 'off',
    numericOrdering: spec.numericOrdering === true,
    alternate: spec.alternate ?? 'non-ignorable',
    spec: {
      locale: spec.locale,
      caseLevel,
      caseFirst: spec.caseFirst ?? 'off',
      strength,
      numericOrdering: spec.numericOrdering === true,
      alternate: spec.alternate ?? 'non-ignorable',
      maxVariable: spec.maxVariable ?? 'punct',
      normalization: spec.normalization === true,
      backwards: spec.backwards === true,
      version: '57.1',
    },
  };
  cache.set(key, collator);
  return collator;
}

/** The Collator mingo was given as its `collation` option, if any. */
export const collatorOf = (options: unknown): Collator | null => ((options as { collation?: Collator } | undefined)?.collation as Collator | undefined)?.spec ? (options as { collation: Collator }).collation : null;

/** Whether two collations (either possibly absent = simple) compare strings the same way. */
export function sameCollation(a: Collator | null, b: Collator | null): boolean {
  return a === b || (!!a && !!b && JSON.stringify(a.spec) === JSON.stringify(b.spec));
}
