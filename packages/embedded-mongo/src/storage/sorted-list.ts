/**
 * An ordered multiset kept as a list of sorted blocks (at most BLOCK_SIZE items each): binary search over blocks,
 * then within a block. Inserting or deleting moves at most one block's items, so writes stay cheap at 100 000+
 * entries where a single sorted array would memmove the whole index on every insert.
 */

const BLOCK_SIZE = 512;

/** A position between items: block `b`, index `i` inside it. `{ b: blocks.length, i: 0 }` is the end. */
export interface Position {
  b: number;
  i: number;
}

/** Orders an item against a search target: negative when the item comes before it. */
export type Probe<T> = (item: T) => number;

export class SortedList<T> {
  private blocks: T[][] = [];
  private count = 0;

  constructor(readonly compare: (a: T, b: T) => number) {}

  get size(): number {
    return this.count;
  }

  insert(item: T): void {
    this.count++;
    if (this.blocks.length === 0) {
      this.blocks.push([item]);
      return;
    }
    let b = this.firstBlock((x) => this.compare(x, item), false);
    if (b === this.blocks.length) b--;
    const block = this.blocks[b];
    block.splice(this.search(block, (x) => this.compare(x, item), false), 0, item);
    if (block.length > BLOCK_SIZE) this.blocks.splice(b + 1, 0, block.splice(BLOCK_SIZE >> 1));
  }

  /** Removes one item equal to `item` (by the list's comparator); false when there is none. */
  delete(item: T): boolean {
    const probe: Probe<T> = (x) => this.compare(x, item);
    const b = this.firstBlock(probe, true);
    if (b === this.blocks.length) return false;
    const block = this.blocks[b];
    const i = this.search(block, probe, true);
    if (i === block.length || this.compare(block[i], item) !== 0) return false;
    block.splice(i, 1);
    if (block.length === 0) this.blocks.splice(b, 1);
    this.count--;
    return true;
  }

  /** First position whose item has probe >= 0 (`strict`: probe > 0). */
  seek(probe: Probe<T>, strict: boolean): Position {
    const inclusive = !strict;
    const b = this.firstBlock(probe, inclusive);
    if (b === this.blocks.length) return { b, i: 0 };
    return { b, i: this.search(this.blocks[b], probe, inclusive) };
  }

  get end(): Position {
    return { b: this.blocks.length, i: 0 };
  }

  /** How many items come before `position` (a range's size is the difference of its ends' ranks). */
  rank(position: Position): number {
    let n = position.i;
    for (let b = 0; b < position.b; b++) n += this.blocks[b].length;
    return n;
  }

  /** Items in [from, to), ascending, or descending from just before `to` down to `from` when `reverse`. */
  *range(from: Position, to: Position, reverse: boolean): Generator<T> {
    const blocks = this.blocks;
    if (!reverse) {
      let { b, i } = from;
      while (b < to.b || (b === to.b && i < to.i)) {
        const block = blocks[b];
        if (i >= block.length) {
          b++;
          i = 0;
          continue;
        }
        yield block[i++];
      }
      return;
    }
    let { b, i } = to;
    for (;;) {
      if (i === 0) {
        if (b === 0) return;
        b--;
        i = blocks[b].length;
        continue;
      }
      i--;
      if (b < from.b || (b === from.b && i < from.i)) return;
      yield blocks[b][i];
    }
  }

  /** First block whose last item has probe >= 0 (or > 0 when not `inclusive`). */
  private firstBlock(probe: Probe<T>, inclusive: boolean): number {
    let lo = 0;
    let hi = this.blocks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const block = this.blocks[mid];
      const r = probe(block[block.length - 1]);
      if (inclusive ? r >= 0 : r > 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private search(block: T[], probe: Probe<T>, inclusive: boolean): number {
    let lo = 0;
    let hi = block.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const r = probe(block[mid]);
      if (inclusive ? r >= 0 : r > 0) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
