/** Reading dotted paths the way MongoDB's index and sort code does. */
import { isPlainObject } from '../bson-values.js';

/**
 * Values of a dotted path as MongoDB indexes them: arrays along the path or at its end contribute each element
 * (an empty array is indexed as itself); `undefined` marks a missing value.
 */
export function pathValues(doc: unknown, parts: string[]): { values: unknown[]; multikey: boolean } {
  if (parts.length === 1 && isPlainObject(doc)) {
    const v = doc[parts[0]];
    if (!Array.isArray(v)) return { values: [v], multikey: false };
  }
  const out: unknown[] = [];
  let multikey = false;
  const walk = (value: unknown, depth: number): void => {
    if (depth === parts.length) {
      if (Array.isArray(value)) {
        multikey = true;
        if (value.length === 0) out.push(value);
        else for (const el of value) out.push(el);
      } else out.push(value);
      return;
    }
    if (Array.isArray(value)) {
      multikey = true;
      const part = parts[depth];
      if (/^\d+$/.test(part)) walk(value[Number(part)], depth + 1);
      let any = false;
      for (const el of value) {
        if (isPlainObject(el)) {
          walk(el, depth);
          any = true;
        }
      }
      if (!any) out.push(undefined);
      return;
    }
    if (isPlainObject(value)) walk(value[parts[depth]], depth + 1);
    else out.push(undefined);
  };
  walk(doc, 0);
  return { values: out, multikey };
}
