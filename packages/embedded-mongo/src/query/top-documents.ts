/**
 * The first `n` documents of a sort without sorting them all: a bounded max-heap of the best `n` seen so far, as
 * MongoDB's top-k sort stage keeps. For a `$text` read whose candidates are many and whose limit is small.
 */
import type { Document } from 'bson';
import { compareBson } from '../bson-values.js';
import type { Collator } from './collation.js';
import { sortValue, type SortSpec } from './sort.js';

interface Keyed {
  doc: Document;
  values: unknown[];
  /** Arrival order: equal documents keep it, as the stable full sort does. */
  seq: number;
}

/** The `n` first of `docs` in `spec`'s order, sorted (stable, like `sortDocuments`). */
export function topDocuments(docs: Document[], spec: SortSpec, n: number, collator: Collator | null, scoreOf?: (doc: Document) => number): Document[] {
  const compare = (a: Keyed, b: Keyed) => {
    for (let i = 0; i < spec.keys.length; i++) {
      const r = compareBson(a.values[i], b.values[i], collator);
      if (r !== 0) return r * spec.keys[i].dir;
    }
    return a.seq - b.seq;
  };
  // heap[0] is the worst of the best n kept.
  const heap: Keyed[] = [];
  const up = (i: number) => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (compare(heap[i], heap[parent]) <= 0) return;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < heap.length && compare(heap[l], heap[worst]) > 0) worst = l;
      if (r < heap.length && compare(heap[r], heap[worst]) > 0) worst = r;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst], heap[i]];
      i = worst;
    }
  };
  docs.forEach((doc, seq) => {
    const keyed = { doc, values: spec.keys.map((k) => (k.textScore ? scoreOf!(doc) : sortValue(doc, k, collator))), seq };
    if (heap.length < n) {
      heap.push(keyed);
      up(heap.length - 1);
    } else if (n > 0 && compare(keyed, heap[0]) < 0) {
      heap[0] = keyed;
      down(0);
    }
  });
  return heap.sort(compare).map((k) => k.doc);
}
