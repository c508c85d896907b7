/**
 * A small, honest query planner. It only narrows which documents are looked at; every candidate is still tested
 * against the filter, less the equality conditions its scan guarantees exactly (query/bounds.ts `guaranteedFields`),
 * so the plan never decides which documents match.
 *
 * - `_id` equality or a short `$in` of `_id`s: primary-map lookups (IDHACK).
 * - Otherwise the index with the longest prefix of equality-bound fields (`v`, `$eq`, `$in` expand into several
 *   point intervals), then optionally one range field (`$gt/$gte/$lt/$lte`). Among equals, an index whose next
 *   fields give the requested sort order (either direction) wins, because its scan can stop after skip+limit.
 * - With no bounds, an index that gives the sort order may still be walked so a limited sort stops early.
 * - Otherwise a collection scan.
 * Partial indexes only when the query implies their filter (query/implication.ts); sparse ones only when the bounds
 * exclude null; multikey ones never give a sort order and get single-sided range bounds. Among eligible indexes, the
 * one serving the most of the query wins (`betterPlan`).
 */
import type { Document } from 'bson';
import { compareBson, hasStrings, idKey, isPlainObject } from '../bson-values.js';
import { badValue } from '../errors.js';
import type { Collection } from '../storage/collection.js';
import { uniqueSorted, WILDCARD_PATH, WILDCARD_VALUE, type IndexEntry, type SecondaryIndex } from '../storage/secondary-index.js';
import { fieldBounds, guaranteedFields, MAX_POINTS, pointMatcher, residualFilter, type Bound, type FieldBounds } from './bounds.js';
import { sameCollation, type Collator } from './collation.js';
import { impliesFilter, parseFilter, type FilterTree } from './implication.js';
import { compileFilter, type Matcher } from './mingo.js';
import { withoutPartialConditions } from './partial-conditions.js';
import { parseSort, sortDocuments, type SortSpec } from './sort.js';
import { textSearch, type TextPlan, type TextScores } from './text-plan.js';
import { topDocuments } from './top-documents.js';
import { then, type Maybe, type Task, type Work } from './work.js';

export interface FindRequest {
  filter?: Document;
  sort?: Document;
  skip?: number;
  /** 0 or undefined: no limit. */
  limit?: number;
  hint?: unknown;
  /** Strings compare under this collation (null or absent: binary). */
  collation?: Collator | null;
  /** `let` variables for `$expr`. */
  variables?: Document;
  /**
   * The command's work (deadline, turns, abandoned regex executions): the scan may then give up the thread between
   * documents and answer a promise. Without it, the scan runs to its end at once.
   */
  work?: Work;
  /** Only the number of matches is wanted (`count`): an index range that guarantees the whole filter is counted, not read. */
  countOnly?: boolean;
}

export interface FindResult {
  docs: Document[];
  stats: ExecutionStats;
  /** `$text` scores of the returned documents. */
  scores?: TextScores;
  /** With `countOnly`: the number of matches (after skip and limit), when counted without reading them into `docs`. */
  count?: number;
}

/** How often (in documents or keys examined) a scan compares the clock with a maxTimeMS deadline. */
const DEADLINE_EVERY = 256;

export interface ExecutionStats {
  stage: 'EOF' | 'IDHACK' | 'IXSCAN' | 'COLLSCAN' | 'TEXT' | 'COUNT_SCAN';
  indexName?: string;
  direction?: 'forward' | 'backward';
  intervals?: number;
  /** True when results were sorted in memory rather than read in order from the index. */
  inMemorySort: boolean;
  keysExamined: number;
  docsExamined: number;
  nReturned: number;
}

interface IndexPlan {
  index: SecondaryIndex;
  /** Point values per equality-bound prefix field. */
  points: unknown[][];
  range?: { low?: Bound; high?: Bound };
  reverse: boolean;
  /** How many leading sort keys the scan yields in order (all of them: no in-memory sort needed). */
  sortedKeys: number;
  score: number;
  /** A wildcard index's plan: the field its path and value positions are bound to. */
  wildcardField?: string;
}

const excludesNull = (b: FieldBounds) =>
  (b.points !== undefined && b.points.every((p) => p !== null)) ||
  (b.low !== undefined && b.low.value !== null) ||
  (b.high !== undefined && b.high.value !== null);

/** Whether an interval's values compare the same under the index's collation as under the query's. */

function planIndex(index: SecondaryIndex, bounds: Map<string, FieldBounds>, sort: SortSpec | null, hinted: boolean, collator: Collator | null): IndexPlan | null {
  // Under another collation than the query's, an index can serve neither string bounds nor a sort order.
  const collationMatches = sameCollation(index.collator, collator);
  const usable = (b: FieldBounds | undefined) => collationMatches || !b || ![...(b.points ?? []), b.low?.value, b.high?.value].some(hasStrings);
  const points: unknown[][] = [];
  let combos = 1;
  for (const field of index.fields) {
    const b = bounds.get(field);
    const p = b?.points;
    if (!p || combos * p.length > MAX_POINTS || !usable(b)) break;
    points.push(p);
    combos *= p.length;
  }
  let range: IndexPlan['range'];
  const next = index.fields[points.length];
  const nb = next === undefined || index.hashedField === points.length ? undefined : bounds.get(next);
  if (nb && (nb.low || nb.high) && usable(nb)) {
    // Different elements of an array may satisfy each side of a range: a multikey index gets one side only.
    range = index.multikey ? (nb.low ? { low: nb.low } : { high: nb.high }) : { low: nb.low, high: nb.high };
  }
  if (index.sparse && !hinted) {
    const used = index.fields.slice(0, points.length + (range ? 1 : 0));
    if (!used.some((f) => excludesNull(bounds.get(f)!))) return null;
  }
  let sortedKeys = 0;
  let reverse = false;
  if (sort && sort.keys.length && !index.multikey && index.hashedField < 0 && collationMatches && !sort.keys.some((k) => k.textScore)) {
    // Equality-bound fields are constant within one interval, so they do not break its order (several intervals
    // are merged by an in-memory sort afterwards).
    const fixed = new Set(index.fields.slice(0, points.length));
    const suffixFields = [...index.fields.slice(points.length), '_id'];
    const suffixDirs = [...index.dirs.slice(points.length), 1];
    let pos = 0;
    for (const key of sort.keys) {
      if (pos < suffixFields.length && suffixFields[pos] === key.field) {
        const rev = suffixDirs[pos] !== key.dir;
        if (sortedKeys === 0) reverse = rev;
        else if (rev !== reverse) break;
        pos++;
        sortedKeys++;
      } else if (fixed.has(key.field)) {
        sortedKeys++;
      } else break;
    }
  }
  const bounded = points.length > 0 || range !== undefined;
  if (!bounded && !hinted && sortedKeys === 0) return null;
  const score = points.length * 10 + (range ? 5 : 0) + (sort && sortedKeys === sort.keys.length ? 3 : sortedKeys > 0 ? 1 : 0);
  return { index, points, range, reverse, sortedKeys, score };
}

/**
 * Between two plans: the one that serves more of the query (more equality-bound fields, then a range, then the sort
 * order), then the smaller index (a partial or sparse one holds fewer entries to walk), then the one declared first.
 */
const betterPlan = (p: IndexPlan, than: IndexPlan) => p.score > than.score || (p.score === than.score && p.index.entries.size < than.index.entries.size);

const partialFilters = new WeakMap<SecondaryIndex, FilterTree>();

function partialFilterOf(index: SecondaryIndex): FilterTree {
  let tree = partialFilters.get(index);
  if (!tree) partialFilters.set(index, (tree = parseFilter(index.spec.partialFilterExpression as Document)));
  return tree;
}

function chooseHinted(coll: Collection, hint: unknown): SecondaryIndex {
  const index = typeof hint === 'string' ? coll.indexes.get(hint) : isPlainObject(hint) ? coll.findIndexByKey(hint) : undefined;
  if (!index || index.kind !== 'btree' || index.spec.hidden === true) throw badValue('hint provided does not correspond to an existing index');
  return index;
}

function cartesian(lists: unknown[][]): unknown[][] {
  let out: unknown[][] = [[]];
  for (const list of lists) out = out.flatMap((t) => list.map((v) => [...t, v]));
  return out;
}

/** `_id` values to fetch directly, when the filter pins `_id` to one or a few values (compared as the `_id` index does). */
function idLookups(coll: Collection, filter: Document, collator: Collator | null): unknown[] | null {
  if (!('_id' in filter) || !coll.idIndex) return null;
  const points = fieldBounds({ _id: filter._id }, collator).get('_id')?.points;
  if (!points || (!sameCollation(coll.idIndex.collator, collator) && points.some(hasStrings))) return null;
  return points;
}

const isContainer = (v: unknown) => isPlainObject(v) || Array.isArray(v);
const comparesContainer = (b: FieldBounds) => (b.points ?? []).some(isContainer) || isContainer(b.low?.value) || isContainer(b.high?.value);

/**
 * The plans of a wildcard index, one per field the query bounds under its prefix, as MongoDB's rules allow: only bounds
 * that exclude null and missing values (a document without the field has no key) and compare with no object or array
 * (it keys their leaves, never them), each plan's index multikey when that path is, and no sort order from the
 * wildcard's value (its entries mix paths).
 */
function wildcardPlans(index: SecondaryIndex, bounds: Map<string, FieldBounds>, sort: SortSpec | null, collator: Collator | null): IndexPlan[] {
  const { prefix, multikeyPaths } = index.wildcard!;
  const plans: IndexPlan[] = [];
  for (const [field, b] of bounds) {
    if (field.startsWith('$') || (prefix !== '' && !field.startsWith(`${prefix}.`)) || (prefix === '' && field === '_id') || !excludesNull(b) || comparesContainer(b)) continue;
    // A path with an array anywhere on it (or under it) is multikey for this plan.
    const multikey = [...multikeyPaths].some((path) => path === field || field.startsWith(`${path}.`) || path.startsWith(`${field}.`));
    const view = Object.create(index, { multikey: { value: multikey } }) as SecondaryIndex;
    const wildcardBounds = new Map(bounds);
    wildcardBounds.set(WILDCARD_PATH, { points: [field] });
    wildcardBounds.set(WILDCARD_VALUE, b);
    const p = planIndex(view, wildcardBounds, sort, false, collator);
    if (p && p.points.length > index.wildcard!.position) plans.push({ ...p, wildcardField: field });
  }
  return plans;
}

/** The eligible index that serves the most of the query (see `betterPlan`), or null for a collection scan. */
function choosePlan(coll: Collection, filter: Document, sort: SortSpec | null, collator: Collator | null): IndexPlan | null {
  const bounds = fieldBounds(filter, collator);
  let plan: IndexPlan | null = null;
  let query: FilterTree | undefined;
  for (const index of coll.indexes.values()) {
    // Hidden indexes are maintained (and enforce uniqueness) but never chosen; a partial index only when the
    // query implies its filter, so that it holds every document the query matches.
    if (index.kind !== 'btree' || index.spec.hidden === true) continue;
    if (index.partial && !impliesFilter((query ??= parseFilter(filter)), partialFilterOf(index), collator, index.collator)) continue;
    if (index.wildcard) {
      for (const p of wildcardPlans(index, bounds, sort, collator)) if (!plan || betterPlan(p, plan)) plan = p;
      continue;
    }
    const p = planIndex(index, bounds, sort, false, collator);
    if (p && (!plan || betterPlan(p, plan))) plan = p;
  }
  return plan;
}

/**
 * Whether a `$text` read is cheaper as a walk of `plan`'s index in sort order, testing the search on each document,
 * than as its candidates sorted: only for a limited read the index fully sorts, when the expected walk
 * (`need` matches at the search's density in the index's range) is shorter than the candidates.
 */
function walkBeatsCandidates(text: TextPlan, plan: IndexPlan, sort: SortSpec | null, need: number): boolean {
  if (!sort || plan.sortedKeys < sort.keys.length || !Number.isFinite(need)) return false;
  const { index } = plan;
  let range = 0;
  for (const interval of cartesian(plan.points.map((points) => uniqueSorted(points, index.collator)))) {
    const [from, to] = index.bounds(interval, plan.range?.low, plan.range?.high);
    range += index.entries.rank(to) - index.entries.rank(from);
  }
  const walk = text.expectedMatches === 0 ? range : Math.min(range, (need * range) / text.expectedMatches);
  return walk < text.candidateCount;
}

/**
 * A document a scan looks at, as the plan found it; its primary-map key when it has to be read again after a pause
 * (none from the collection's own live iterator) and, in an index scan, its entry.
 */
interface Candidate {
  doc: Document | undefined;
  ik?: string;
  entry?: IndexEntry;
}

/** Where a scan's candidates come from, in order. */
interface CandidateSource {
  /** The next candidate, or null when there is none (or the scan may stop early). */
  next(): Candidate | null;
  /** The candidate matched (index scans end a run of equal sort keys after their limit). */
  matched?(candidate: Candidate): void;
  /** The command is about to give up the thread: keep what remains out of structures other commands may change. */
  detach?(): void;
}

/**
 * A scan as a resumable task (work.ts): candidates are tested one at a time, so the scan can stop between two of
 * them and go on later. After it has given up the thread once, each candidate is read again by its key (skipped when
 * deleted meanwhile) and tested against the whole filter, since what the plan guaranteed may no longer hold. As with
 * MongoDB's yielding, a document another command changed meanwhile comes back where the scan found it. A `$text` read
 * tests each document against the search as well, whichever source its candidates come from.
 */
class Scan implements Task {
  readonly docs: Document[] = [];
  private readonly source: CandidateSource;
  private pending: Candidate | null = null;
  private resumed = false;
  private full: Matcher | null | undefined;

  constructor(
    private readonly coll: Collection,
    source: (docs: Document[]) => CandidateSource,
    private readonly matcher: Matcher | null,
    private readonly fullFilter: () => Matcher | null,
    private readonly text: TextPlan | null,
    private readonly stats: ExecutionStats,
    private readonly work: Work | undefined,
  ) {
    this.source = source(this.docs);
  }

  step(until: number, maxItems: number): boolean {
    for (let n = 0; ; n++) {
      if (this.pending === null && (this.pending = this.source.next()) === null) return true;
      if (n >= maxItems || (n > 0 && (n & 15) === 0 && performance.now() >= until)) return false;
      const candidate = this.pending;
      const doc = this.resumed && candidate.ik !== undefined ? this.coll.docs.get(candidate.ik) : candidate.doc;
      if (doc && this.examine(doc, candidate.ik)) {
        this.docs.push(doc);
        this.source.matched?.(candidate);
      }
      this.pending = null;
    }
  }

  suspend(): void {
    this.source.detach?.();
    this.resumed = true;
    // The candidate waiting for the next turn is read again then, whatever its source.
    const pending = this.pending;
    if (pending?.doc && pending.ik === undefined) this.pending = { doc: pending.doc, ik: this.coll.keyOf(pending.doc) };
  }

  private examine(doc: Document, ik: string | undefined): boolean {
    if (++this.stats.docsExamined % DEADLINE_EVERY === 0) this.work?.checkDeadline();
    const matcher = this.resumed ? (this.full === undefined ? (this.full = this.fullFilter()) : this.full) : this.matcher;
    return (matcher === null || matcher.test(doc)) && (this.text === null || this.text.matches(doc, ik ?? this.coll.keyOf(doc)));
  }
}

const arraySource = (candidates: Candidate[]): CandidateSource => {
  let i = 0;
  return { next: () => (i < candidates.length ? candidates[i++] : null) };
};

/**
 * Runs a find-style read: matching documents (stored references, not copies) in order, after skip and limit. With
 * the command's `work`, a long scan gives up the thread between documents and answers a promise.
 */
export function findDocuments(coll: Collection | undefined, req: FindRequest & { work?: undefined }): FindResult;
export function findDocuments(coll: Collection | undefined, req: FindRequest): Maybe<FindResult>;
export function findDocuments(coll: Collection | undefined, req: FindRequest): Maybe<FindResult> {
  const collator = req.collation ?? null;
  const evalOptions = { collation: collator, variables: req.variables };
  const text = textSearch(coll, req.filter ?? {});
  const filter = text ? text.rest : (req.filter ?? {});
  const compile = (rest: Document): Matcher | null => (Object.keys(rest).length ? (pointMatcher(rest, collator) ?? compileFilter(rest, evalOptions)) : null);
  const sort = parseSort(req.sort);
  const skip = req.skip ?? 0;
  const need = req.limit ? skip + req.limit : Infinity;
  const stats: ExecutionStats = { stage: 'EOF', inMemorySort: false, keysExamined: 0, docsExamined: 0, nReturned: 0 };
  const scoreOf = text ? (doc: Document) => text.scores.get(doc) ?? 0 : undefined;
  const finish = (docs: Document[], sorted: boolean): FindResult => {
    if (sort && !sorted) {
      // Many candidates of a small limited read (`$text`): keep the best ones rather than sort them all.
      docs = need < docs.length / 4 ? topDocuments(docs, sort, need, collator, scoreOf) : sortDocuments(docs, sort, collator, scoreOf);
      stats.inMemorySort = true;
    }
    const out = skip || need < docs.length ? docs.slice(skip, need) : docs;
    stats.nReturned = out.length;
    return { docs: out, stats, scores: text?.scores };
  };
  if (!coll) {
    compile(filter);
    return finish([], true);
  }
  /**
   * Scans `source`, testing candidates with `rest` of the filter (and the `$text` search, if any); `sorted`: the scan
   * yields the requested order.
   */
  const scan = (source: (docs: Document[]) => CandidateSource, rest: Document, sorted: () => boolean): Maybe<FindResult> => {
    const matcher = compile(rest);
    const task = new Scan(coll, source, matcher, () => (rest === filter ? matcher : compile(filter)), text, stats, req.work);
    if (!req.work) {
      task.step(Infinity, Infinity);
      return finish(task.docs, sorted());
    }
    return then(req.work.run(task, matcher?.guarded === true), () => finish(task.docs, sorted()));
  };

  let textWalk: IndexPlan | null = null;
  if (text) {
    textWalk = req.hint === undefined && sort?.natural === undefined ? choosePlan(coll, filter, sort, collator) : null;
    if (!textWalk || !walkBeatsCandidates(text, textWalk, sort, need)) {
      stats.stage = 'TEXT';
      return scan(() => textSource(coll, text), filter, () => false);
    }
  }

  const ids = req.hint === undefined && !text ? idLookups(coll, filter, collator) : null;
  if (ids) {
    stats.stage = 'IDHACK';
    const seen = new Set<string>();
    const candidates: Candidate[] = [];
    for (const id of ids) {
      const ik = idKey(id);
      const doc = coll.docs.get(ik);
      if (!doc || seen.has(ik)) continue;
      seen.add(ik);
      candidates.push({ ik, doc });
    }
    return scan(() => arraySource(candidates), residualFilter(filter, guaranteedFields(filter, new Map([['_id', ids]]), collator)), () => false);
  }

  let plan: IndexPlan | null = null;
  if (req.hint !== undefined && !(isPlainObject(req.hint) && '$natural' in req.hint)) {
    plan = planIndex(chooseHinted(coll, req.hint), fieldBounds(filter, collator), sort, true, collator);
  } else if (req.hint === undefined && sort?.natural === undefined) {
    plan = textWalk ?? choosePlan(coll, filter, sort, collator);
  }

  if (!plan) {
    stats.stage = 'COLLSCAN';
    const ordered = !sort || sort.natural !== undefined;
    return scan((docs) => collectionSource(coll, sort?.natural === -1, () => ordered && docs.length >= need), filter, () => ordered);
  }

  const { index, wildcardField } = plan;
  stats.stage = 'IXSCAN';
  stats.indexName = index.name;
  stats.direction = plan.reverse ? 'backward' : 'forward';
  // Equality on the prefix fields of a single-valued index is what its intervals hold (a multikey index may hold
  // an array's elements where the condition is about the whole array, and is tested in full). A wildcard plan's value
  // position holds its field's values: a count on a path without arrays is counted from the index alone, as MongoDB's.
  const keyField = (i: number) => (index.fields[i] === WILDCARD_VALUE && wildcardField ? wildcardField : index.fields[i]);
  const prefix = new Map(index.multikey || index.hashedField >= 0 ? [] : plan.points.map((points, i) => [keyField(i), points]));
  const residual = residualFilter(filter, guaranteedFields(filter, prefix, collator));
  const rest = withoutPartialConditions(residual, index.spec.partialFilterExpression as Document | undefined, index.collator, collator);
  // Repeated `$in` values would read their documents twice.
  const intervals = cartesian(plan.points.map((points) => uniqueSorted(points, index.collator)));
  stats.intervals = intervals.length;
  if (req.countOnly && Object.keys(rest).length === 0 && !index.multikey && !text) {
    // The intervals hold exactly the matches: count them by their ends' ranks (MongoDB's COUNT_SCAN), reading none.
    let total = 0;
    for (const interval of intervals) {
      const [from, to] = index.bounds(interval, plan.range?.low, plan.range?.high);
      total += index.entries.rank(to) - index.entries.rank(from);
    }
    stats.stage = 'COUNT_SCAN';
    stats.keysExamined = total;
    stats.nReturned = Math.max(0, Math.min(total, need) - skip);
    return { docs: [], stats, count: stats.nReturned };
  }
  const fullySorted = !sort || plan.sortedKeys === sort.keys.length;
  const chosen = plan;
  return scan(
    (docs) => indexSource(coll, chosen, intervals, { sort, need, fullySorted, docs, stats, work: req.work }),
    rest,
    () => fullySorted && intervals.length === 1,
  );
}

/**
 * The candidates of a `$text` search. Before the command first gives up the thread, the rest of them is copied out
 * of the text index's postings, which other commands may change meanwhile.
 */
function textSource(coll: Collection, text: TextPlan): CandidateSource {
  let keys: Iterator<string> = text.candidates()[Symbol.iterator]();
  let copied = false;
  return {
    next() {
      const r = keys.next();
      return r.done ? null : { ik: r.value, doc: coll.docs.get(r.value) };
    },
    detach() {
      if (copied) return;
      const rest: string[] = [];
      for (let r = keys.next(); !r.done; r = keys.next()) rest.push(r.value);
      keys = rest.values();
      copied = true;
    },
  };
}

/** A collection scan in natural order (insertion order; `reverse`: newest first), until `enough()`. */
function collectionSource(coll: Collection, reverse: boolean, enough: () => boolean): CandidateSource {
  if (reverse) {
    // A copy of the keys, newest first: each document is read by its key.
    const keys = [...coll.docs.keys()].reverse();
    let i = 0;
    return { next: () => (enough() || i >= keys.length ? null : { ik: keys[i], doc: coll.docs.get(keys[i++]) }) };
  }
  // The map's own iterator stays valid while other commands write, and gives each document as it is now. One
  // candidate object serves the whole scan (a scan holds one candidate at a time).
  const values = coll.docs.values();
  const candidate: Candidate = { doc: undefined };
  return {
    next() {
      if (enough()) return null;
      const r = values.next();
      if (r.done) return null;
      candidate.doc = r.value;
      return candidate;
    },
  };
}

interface IndexScanState {
  sort: SortSpec | null;
  need: number;
  fullySorted: boolean;
  /** The scan's matches so far. */
  docs: Document[];
  stats: ExecutionStats;
  work: Work | undefined;
}

/**
 * The entries of an index plan's intervals in order. Enough results in index order end an interval: when the order
 * only covers a prefix of the sort keys, at the end of the current run of equal prefix values (the in-memory sort
 * orders within it); with no order, never. Before the command gives up the thread, the rest of the current interval
 * is copied out of the index (which other commands may change meanwhile); later intervals are read when reached.
 */
function indexSource(coll: Collection, plan: IndexPlan, intervals: unknown[][], state: IndexScanState): CandidateSource {
  const { index } = plan;
  const { sort, need, fullySorted, docs, stats, work } = state;
  // Index positions of the sort keys the scan yields in order, to find where a run of equal values ends.
  const runFields = sort ? sort.keys.slice(0, plan.sortedKeys).map((k) => index.fields.indexOf(k.field)).filter((i) => i >= 0) : [];
  const sameRun = (a: IndexEntry, b: IndexEntry) => runFields.every((i) => compareBson(a.k[i], b.k[i], index.collator) === 0);
  const seen = index.multikey ? new Set<string>() : null;
  let next = 0;
  let live: Iterator<IndexEntry> | null = null;
  let copied: IndexEntry[] | null = null;
  let at = 0;
  let start = 0;
  let lastTaken: IndexEntry | null = null;
  const open = (): boolean => {
    if (next >= intervals.length || (next > 0 && !sort && docs.length >= need)) return false;
    const [from, to] = index.bounds(intervals[next++], plan.range?.low, plan.range?.high);
    live = index.entries.range(from, to, plan.reverse);
    start = docs.length;
    lastTaken = null;
    return true;
  };
  const pull = (): IndexEntry | undefined => {
    if (copied) return at < copied.length ? copied[at++] : undefined;
    const r = live!.next();
    return r.done ? undefined : r.value;
  };
  const endInterval = () => {
    live = null;
    copied = null;
  };
  return {
    next() {
      for (;;) {
        if (!live && !copied && !open()) return null;
        const entry = pull();
        if (!entry) {
          endInterval();
          continue;
        }
        if (++stats.keysExamined % DEADLINE_EVERY === 0) work?.checkDeadline();
        const taken = docs.length - (sort ? start : 0);
        if (taken >= need && (fullySorted || (plan.sortedKeys > 0 && lastTaken && !sameRun(entry, lastTaken)))) {
          endInterval();
          continue;
        }
        if (seen) {
          if (seen.has(entry.ik)) continue;
          seen.add(entry.ik);
        }
        return { ik: entry.ik, doc: coll.docs.get(entry.ik), entry };
      }
    },
    matched(candidate) {
      lastTaken = candidate.entry!;
    },
    detach() {
      if (!live) return;
      copied = [];
      for (let r = live.next(); !r.done; r = live.next()) copied.push(r.value);
      at = 0;
      live = null;
    },
  };
}
