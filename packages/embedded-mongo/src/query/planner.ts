/**
 * A query planner after MongoDB's. It only narrows which documents are looked at; every candidate is still tested
 * against the filter, less the conditions its scan guarantees exactly (query/bounds.ts `guaranteedFields`,
 * `guaranteedRange`), so the plan never decides which documents match.
 *
 * - `_id` equality or a short `$in` of `_id`s: primary-map lookups (IDHACK).
 * - Otherwise each eligible index gives a plan: its longest prefix of equality-bound fields (`v`, `$eq`, `$in` expand
 *   into several point intervals), then optionally one range field (`$gt/$gte/$lt/$lte`), and how much of the
 *   requested sort its next fields give (either direction). With no bounds, an index that gives the sort order still
 *   gives a plan, so a limited sort can stop early. No plan: a collection scan.
 * - One plan runs as it is. Among several, those another one dominates are dropped (`dominates`), then the rest run a
 *   trial as MongoDB's multi-planner does (`Trial`): the most productive wins, so a plan that gives the sort and
 *   stops after the limit beats one that must read and sort every match, and the reverse on small ranges. The
 *   winner is cached per query shape (`CachedPlan`) and replanned when it turns out ten times costlier.
 * - A count whose filter a plan's intervals hold exactly is counted from the index keys (COUNT_SCAN), without a trial.
 * Partial indexes only when the query implies their filter (query/implication.ts); sparse ones only when the bounds
 * exclude null; multikey ones never give a sort order and get single-sided range bounds.
 */
import type { Document } from 'bson';
import { compareBson, hasStrings, idKey, isPlainObject, isRegexValue, typeRank } from '../bson-values.js';
import { badValue } from '../errors.js';
import type { Collection } from '../storage/collection.js';
import { uniqueSorted, WILDCARD_PATH, WILDCARD_VALUE, type IndexEntry, type SecondaryIndex } from '../storage/secondary-index.js';
import { fieldBounds, guaranteedFields, guaranteedRange, MAX_POINTS, pointMatcher, residualFilter, type Bound, type FieldBounds } from './bounds.js';
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
  /** True when the index's intervals were each read in the requested order and merged (MongoDB's SORT_MERGE). */
  sortMerge?: boolean;
  /** The other plans the trial tried (their index names). */
  rejectedPlans?: string[];
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
  /** The range's open end stops at the edge of this BSON type's keys (see SecondaryIndex `bounds`). */
  rangeRank?: number;
}

const excludesNull = (b: FieldBounds) =>
  (b.points !== undefined && b.points.every((p) => p !== null)) ||
  (b.low !== undefined && b.low.value !== null) ||
  (b.high !== undefined && b.high.value !== null);

/** Whether an interval's values compare the same under the index's collation as under the query's. */

function planIndex(
  index: SecondaryIndex,
  bounds: Map<string, FieldBounds>,
  sort: SortSpec | null,
  hinted: boolean,
  collator: Collator | null,
): IndexPlan | null {
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
const betterPlan = (p: IndexPlan, than: IndexPlan) =>
  p.score > than.score || (p.score === than.score && p.index.entries.size < than.index.entries.size);

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
    if (
      field.startsWith('$') ||
      (prefix !== '' && !field.startsWith(`${prefix}.`)) ||
      (prefix === '' && field === '_id') ||
      !excludesNull(b) ||
      comparesContainer(b)
    )
      continue;
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

/** The query fields a plan's intervals bound (a wildcard plan's value position stands for its field). */
function boundFields(plan: IndexPlan): Set<string> {
  const { fields } = plan.index;
  const n = plan.points.length + (plan.range ? 1 : 0);
  const out = new Set<string>();
  for (let i = 0; i < n; i++) {
    if (fields[i] === WILDCARD_PATH) continue;
    out.add(fields[i] === WILDCARD_VALUE ? plan.wildcardField! : fields[i]);
  }
  return out;
}

/**
 * Whether `p` is never worse than `than`: it bounds every field `than` bounds (so its intervals hold no more entries)
 * and yields at least as much of the sort order. Such a `than` is not worth a trial.
 */
function dominates(p: IndexPlan, than: IndexPlan): boolean {
  if (p.sortedKeys < than.sortedKeys || (p.index.multikey && !than.index.multikey)) return false;
  // A partial or sparse index may hold fewer entries than its bounds suggest.
  if (p.index !== than.index && (than.index.partial || than.index.sparse)) return false;
  const mine = boundFields(p);
  for (const field of boundFields(than)) if (!mine.has(field)) return false;
  return true;
}

/**
 * The eligible index plans worth trying, best first by `betterPlan` (empty: a collection scan). A plan that another
 * one dominates is left out, as is the later of two that bound the same fields and give the same order.
 */
function candidatePlans(coll: Collection, filter: Document, sort: SortSpec | null, collator: Collator | null, only?: CachedPlan): IndexPlan[] {
  const bounds = fieldBounds(filter, collator);
  const plans: IndexPlan[] = [];
  let query: FilterTree | undefined;
  for (const index of coll.indexes.values()) {
    // Hidden indexes are maintained (and enforce uniqueness) but never chosen; a partial index only when the
    // query implies its filter, so that it holds every document the query matches.
    if (index.kind !== 'btree' || index.spec.hidden === true || (only && index !== only.index)) continue;
    if (index.partial && !impliesFilter((query ??= parseFilter(filter)), partialFilterOf(index), collator, index.collator)) continue;
    if (index.wildcard) {
      for (const p of wildcardPlans(index, bounds, sort, collator)) if (!only || p.wildcardField === only.wildcardField) plans.push(p);
      continue;
    }
    const p = planIndex(index, bounds, sort, false, collator);
    if (p) plans.push(p);
  }
  plans.sort((a, b) => (betterPlan(a, b) ? -1 : betterPlan(b, a) ? 1 : 0));
  return plans.filter((p, i) => !plans.some((q, j) => q !== p && dominates(q, p) && (j < i || !dominates(p, q))));
}

/**
 * MongoDB's plan cache, per collection: the plan a trial chose for a query's shape (its fields, operators and value
 * types, the sort, whether it is limited or counted), and the works the trial took to choose it. It is dropped when
 * an index is created, rebuilt or dropped, or when the chosen index becomes multikey; a cached plan that takes more
 * than ten times those works is replanned (MongoDB's `internalQueryCacheEvictionRatio`).
 */
interface CachedPlan {
  index: SecondaryIndex;
  wildcardField?: string;
  multikey: boolean;
  works: number;
}

const MAX_CACHED_SHAPES = 500;
const planCaches = new WeakMap<Collection, { version: number; shapes: Map<string, CachedPlan> }>();

function planCacheOf(coll: Collection): Map<string, CachedPlan> {
  let cache = planCaches.get(coll);
  if (!cache || cache.version !== coll.indexVersion) planCaches.set(coll, (cache = { version: coll.indexVersion, shapes: new Map() }));
  return cache.shapes;
}

/** A filter's shape: its structure with each value replaced by its type (and an `$in` by its values' types and size). */
function shapeOf(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(shapeOf).join()}]`;
  if (isPlainObject(v)) {
    const parts = Object.entries(v).map(([k, x]) => {
      if ((k === '$in' || k === '$nin') && Array.isArray(x)) {
        const size = x.length < 2 ? String(x.length) : x.length > MAX_POINTS ? 'many' : 'n';
        return `${JSON.stringify(k)}:${size}(${[...new Set(x.map(shapeOf))].sort().join()})`;
      }
      return `${JSON.stringify(k)}:${shapeOf(x)}`;
    });
    return `{${parts.join()}}`;
  }
  if (isRegexValue(v)) return 'r';
  if (typeof v === 'number' && Number.isNaN(v)) return 'nan';
  return v === null ? 'null' : String(typeRank(v));
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
    const [from, to] = index.bounds(interval, plan.range?.low, plan.range?.high, plan.rangeRank);
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
  const compile = (rest: Document): Matcher | null =>
    Object.keys(rest).length ? (pointMatcher(rest, collator) ?? compileFilter(rest, evalOptions)) : null;
  const sort = parseSort(req.sort);
  const skip = req.skip ?? 0;
  const need = req.limit ? skip + req.limit : Infinity;
  const newStats = (stage: ExecutionStats['stage']): ExecutionStats => ({
    stage,
    inMemorySort: false,
    keysExamined: 0,
    docsExamined: 0,
    nReturned: 0,
  });
  const scoreOf = text ? (doc: Document) => text.scores.get(doc) ?? 0 : undefined;
  const finish = (docs: Document[], sorted: boolean, stats: ExecutionStats): FindResult => {
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
    return finish([], true, newStats('EOF'));
  }
  /**
   * A scan of `source` with its own counters, testing candidates with `rest` of the filter (and the `$text` search,
   * if any); `sorted`: the scan yields the requested order.
   */
  const prepareScan = (
    stats: ExecutionStats,
    source: (docs: Document[]) => CandidateSource,
    rest: Document,
    sorted: () => boolean,
    streams: boolean,
  ): Prepared => {
    const matcher = compile(rest);
    const task = new Scan(coll, source, matcher, () => (rest === filter ? matcher : compile(filter)), text, stats, req.work);
    return { task, stats, sorted, streams, guarded: matcher?.guarded === true, done: false };
  };
  const runTask = (task: Task, guarded: boolean, result: () => FindResult): Maybe<FindResult> => {
    if (!req.work) {
      task.step(Infinity, Infinity);
      return result();
    }
    return then(req.work.run(task, guarded), result);
  };
  const run = (p: Prepared): Maybe<FindResult> => runTask(p.task, p.guarded, () => finish(p.task.docs, p.sorted(), p.stats));

  /** What a plan's scan must still test, its intervals, and its range bracketed by type where that makes it exact. */
  const layout = (plan: IndexPlan): Layout => {
    const { index, wildcardField } = plan;
    const hashed = index.hashedField >= 0;
    // Equality on the prefix fields is what the intervals hold (on a multikey index, for exact scalars only; see
    // guaranteedFields). A wildcard plan's value position holds its field's values.
    const keyField = (i: number) => (index.fields[i] === WILDCARD_VALUE && wildcardField ? wildcardField : index.fields[i]);
    const prefix = new Map(hashed ? [] : plan.points.map((points, i) => [keyField(i), points]));
    const guaranteed = guaranteedFields(filter, prefix, collator, index.multikey);
    const { range } = plan;
    let rangeRank: number | undefined;
    if (range && !index.multikey && !hashed) {
      const field = keyField(plan.points.length);
      const rank = guaranteedRange(filter, field, range);
      if (rank !== null) {
        guaranteed.add(field);
        rangeRank = rank;
      }
    }
    const rest = withoutPartialConditions(
      residualFilter(filter, guaranteed),
      index.spec.partialFilterExpression as Document | undefined,
      index.collator,
      collator,
    );
    // Repeated `$in` values would read their documents twice.
    const intervals = cartesian(plan.points.map((points) => uniqueSorted(points, index.collator)));
    return { plan: { ...plan, range, rangeRank }, rest, intervals };
  };
  const keysIn = ({ plan, intervals }: Layout): number => {
    let total = 0;
    for (const interval of intervals) {
      const [from, to] = plan.index.bounds(interval, plan.range?.low, plan.range?.high, plan.rangeRank);
      total += plan.index.entries.rank(to) - plan.index.entries.rank(from);
    }
    return total;
  };
  /** A count its intervals answer: they hold exactly the matches (a multikey index's, each document's keys once). */
  const countable = (l: Layout) =>
    req.countOnly === true &&
    !text &&
    Object.keys(l.rest).length === 0 &&
    (!l.plan.index.multikey || holdsEachOnce(l.plan, l.intervals) || keysIn(l) <= MAX_COUNT_WALK);
  /** MongoDB's COUNT_SCAN: counts the intervals' keys by their ends' ranks, or walks a multikey index's, reading no document. */
  const countFrom = (l: Layout): FindResult => {
    const { plan, intervals } = l;
    const stats = newStats('COUNT_SCAN');
    stats.indexName = plan.index.name;
    stats.intervals = intervals.length;
    let total = 0;
    if (!plan.index.multikey || holdsEachOnce(plan, intervals)) {
      total = keysIn(l);
      stats.keysExamined = total;
    } else {
      // A document holds a key per element: de-duplicated by record, as MongoDB's COUNT_SCAN does on a multikey index.
      const seen = new Set<string>();
      for (let i = 0; i < intervals.length && seen.size < need; i++) {
        const [from, to] = plan.index.bounds(intervals[i], plan.range?.low, plan.range?.high, plan.rangeRank);
        for (const entry of plan.index.entries.range(from, to, false)) {
          stats.keysExamined++;
          seen.add(entry.ik);
          if (seen.size >= need) break;
        }
      }
      total = seen.size;
    }
    stats.nReturned = Math.max(0, Math.min(total, need) - skip);
    return { docs: [], stats, count: stats.nReturned };
  };
  const prepareIndex = ({ plan, rest, intervals }: Layout): Prepared => {
    const stats = newStats('IXSCAN');
    stats.indexName = plan.index.name;
    stats.direction = plan.reverse ? 'backward' : 'forward';
    stats.intervals = intervals.length;
    const fullySorted = !sort || plan.sortedKeys === sort.keys.length;
    // Several intervals each in the requested order are merged as they are read (very many: sorted in memory after).
    const merging = sort !== null && fullySorted && intervals.length > 1 && intervals.length <= MAX_MERGED_INTERVALS;
    stats.sortMerge = merging;
    const ordered = fullySorted && (intervals.length === 1 || merging);
    const state = { sort, need, fullySorted, stats, work: req.work };
    return prepareScan(
      stats,
      (docs) => (merging ? mergeSource(coll, plan, intervals, sort, { ...state, docs }) : indexSource(coll, plan, intervals, { ...state, docs })),
      rest,
      () => ordered,
      !sort || ordered,
    );
  };
  const execute = (plan: IndexPlan): Maybe<FindResult> => {
    const l = layout(plan);
    return countable(l) ? countFrom(l) : run(prepareIndex(l));
  };
  const runTrial = (trial: Trial): Maybe<FindResult> =>
    runTask(trial, trial.guarded, () => {
      const winner = trial.winner!;
      return finish(winner.task.docs, winner.sorted(), winner.stats);
    });

  let textWalk: IndexPlan | null = null;
  if (text) {
    textWalk = req.hint === undefined && sort?.natural === undefined ? (candidatePlans(coll, filter, sort, collator)[0] ?? null) : null;
    if (!textWalk || !walkBeatsCandidates(text, textWalk, sort, need))
      return run(
        prepareScan(
          newStats('TEXT'),
          () => textSource(coll, text),
          filter,
          () => false,
          false,
        ),
      );
    return execute(textWalk);
  }

  const ids = req.hint === undefined ? idLookups(coll, filter, collator) : null;
  if (ids) {
    const seen = new Set<string>();
    const candidates: Candidate[] = [];
    for (const id of ids) {
      const ik = idKey(id);
      const doc = coll.docs.get(ik);
      if (!doc || seen.has(ik)) continue;
      seen.add(ik);
      candidates.push({ ik, doc });
    }
    const rest = residualFilter(filter, guaranteedFields(filter, new Map([['_id', ids]]), collator));
    return run(
      prepareScan(
        newStats('IDHACK'),
        () => arraySource(candidates),
        rest,
        () => false,
        false,
      ),
    );
  }

  if (req.hint !== undefined && !(isPlainObject(req.hint) && '$natural' in req.hint)) {
    return execute(planIndex(chooseHinted(coll, req.hint), fieldBounds(filter, collator), sort, true, collator)!);
  }
  if (req.hint === undefined && sort?.natural === undefined) {
    // Plans under a collation are not cached: the shape would have to name it.
    const cache = collator === null ? planCacheOf(coll) : null;
    const shape = cache
      ? `${shapeOf(filter)} ${JSON.stringify(req.sort ?? null)} ${need === Infinity ? 'all' : 'limited'} ${req.countOnly ? 'count' : 'read'}`
      : '';
    const target = Math.min(need, TRIAL_RESULTS);
    const maxWorks = Math.max(TRIAL_WORKS, Math.ceil(TRIAL_COLLECTION_FRACTION * coll.docs.size));
    /** The trial among every candidate plan; the winner is cached when there was a choice. */
    const fullTrial = (layouts: Layout[]): Trial => {
      const candidates = layouts.map(prepareIndex);
      return new Trial(candidates, target, maxWorks, (winner, works) => {
        if (!cache || candidates.length < 2) return;
        if (cache.size >= MAX_CACHED_SHAPES) cache.delete(cache.keys().next().value!);
        const { index, wildcardField } = layouts[candidates.indexOf(winner)].plan;
        cache.set(shape, { index, wildcardField, multikey: index.multikey, works });
      });
    };
    const cached = cache?.get(shape);
    if (cached) {
      const [plan] = cached.index.multikey === cached.multikey ? candidatePlans(coll, filter, sort, collator, cached) : [];
      if (plan) {
        const l = layout(plan);
        if (countable(l)) return countFrom(l);
        // The cached plan alone, until it has done ten times the trial's works; then a new trial among all.
        return runTrial(
          new Trial([prepareIndex(l)], target, Math.max(CACHE_EVICTION_RATIO * cached.works, target), undefined, () => {
            cache!.delete(shape);
            return fullTrial(candidatePlans(coll, filter, sort, collator).map(layout));
          }),
        );
      }
      cache!.delete(shape);
    }
    const layouts = candidatePlans(coll, filter, sort, collator).map(layout);
    if (req.countOnly) {
      const counted = layouts.find((l) => !l.plan.index.multikey && countable(l)) ?? layouts.find(countable);
      if (counted) return countFrom(counted);
    }
    if (layouts.length === 1) return run(prepareIndex(layouts[0]));
    if (layouts.length > 1) return runTrial(fullTrial(layouts));
  }

  const ordered = !sort || sort.natural !== undefined;
  return run(
    prepareScan(
      newStats('COLLSCAN'),
      (docs) => collectionSource(coll, sort?.natural === -1, () => ordered && docs.length >= need),
      filter,
      () => ordered,
      false,
    ),
  );
}

/** A candidate plan made ready to run: its scan with its own counters. */
interface Prepared {
  task: Scan;
  stats: ExecutionStats;
  /** Whether the scan's matches come out in the requested order (no in-memory sort). */
  sorted: () => boolean;
  /** Whether its matches are results as soon as found (in order, or no order asked): a sort-providing plan's are. */
  streams: boolean;
  guarded: boolean;
  /** The scan has reached its end. */
  done: boolean;
}

interface Layout {
  plan: IndexPlan;
  rest: Document;
  intervals: unknown[][];
}

/** MongoDB's trial period: each candidate works until one has `internalQueryPlanEvaluationMaxResults` results or ends, ... */
const TRIAL_RESULTS = 101;
/** ... or each has done `internalQueryPlanEvaluationWorks`, or this fraction of the collection if more. */
const TRIAL_WORKS = 10_000;
const TRIAL_COLLECTION_FRACTION = 0.3;
const CACHE_EVICTION_RATIO = 10;
/** Beyond this many intervals, a sorted read sorts their matches in memory rather than merging the intervals. */
const MAX_MERGED_INTERVALS = 64;
/** A multikey count walks its keys in one turn: beyond this many, its documents are read in turns instead. */
const MAX_COUNT_WALK = 100_000;

const worksOf = (c: Prepared) => c.stats.keysExamined + c.stats.docsExamined;

/**
 * MongoDB's multi-planner, as a task: the candidates' scans take turns, one candidate document each, until one of
 * them has `target` results in order or reaches its end, or all have done `maxWorks`. The winner is the most
 * productive (results per work; a plan that must sort in memory has none before its end), with a bonus for having
 * ended and, on ties, for giving the order, then the first candidate (the best by `betterPlan`); its scan then goes
 * on where the trial left it, so the trial's work is kept. With `replan`, the single candidate is a cached plan: past
 * `maxWorks` without deciding, a new trial (from `replan`) takes its place.
 */
class Trial implements Task {
  winner: Prepared | null = null;
  private at = 0;

  constructor(
    private candidates: Prepared[],
    private readonly target: number,
    private maxWorks: number,
    private decided?: (winner: Prepared, works: number) => void,
    private replan?: () => Trial,
  ) {}

  get guarded(): boolean {
    return this.candidates.some((c) => c.guarded);
  }

  step(until: number, maxItems: number): boolean {
    let items = 0;
    while (!this.winner) {
      for (; this.at < this.candidates.length; this.at++) {
        const c = this.candidates[this.at];
        if (c.done || worksOf(c) >= this.maxWorks) continue;
        if (items >= maxItems || (items > 0 && (items & 15) === 0 && performance.now() >= until)) return false;
        c.done = c.task.step(Infinity, 1);
        items++;
      }
      this.at = 0;
      this.decide();
    }
    if (this.winner.done) return true;
    if (items >= maxItems) return false;
    return (this.winner.done = this.winner.task.step(until, maxItems - items));
  }

  suspend(): void {
    for (const c of this.winner ? [this.winner] : this.candidates) c.task.suspend();
  }

  private decide(): void {
    const ended = this.candidates.some((c) => c.done || (c.streams && c.task.docs.length >= this.target));
    if (!ended && this.candidates.some((c) => worksOf(c) < this.maxWorks)) return;
    if (!ended && this.replan) {
      const next = this.replan();
      this.candidates = next.candidates;
      this.maxWorks = next.maxWorks;
      this.decided = next.decided;
      this.replan = undefined;
      return;
    }
    let best = this.candidates[0];
    let bestScore = -1;
    for (const c of this.candidates) {
      const produced = c.streams || c.done ? c.task.docs.length : 0;
      const score = produced / Math.max(1, worksOf(c)) + (c.done ? 1 : 0) + (c.streams ? 1e-4 : 0);
      if (score > bestScore) [best, bestScore] = [c, score];
    }
    this.winner = best;
    best.stats.rejectedPlans = this.candidates.filter((c) => c !== best).map((c) => c.stats.indexName!);
    this.decided?.(best, worksOf(best));
  }
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

/**
 * Whether a multikey index's intervals hold each document at most once: every field that has held an array is bound to
 * a single point, so a document's keys there differ only in single-valued fields, which also tell the intervals apart.
 */
function holdsEachOnce(plan: IndexPlan, intervals: unknown[][]): boolean {
  const { index } = plan;
  if (index.wildcard) return false;
  return index.multikeyFields.every(
    (multikey, i) => !multikey || (i < plan.points.length && intervals.every((t) => compareBson(t[i], intervals[0][i], index.collator) === 0)),
  );
}

/**
 * MongoDB's SORT_MERGE: the entries of several intervals, each in the requested order, merged into that order by their
 * sort keys (ties: the earlier interval first), so that the scan stops after `need` matches in all, as a single
 * interval's does. Before the command gives up the thread, what remains of each interval is copied out of the index.
 */
function mergeSource(coll: Collection, plan: IndexPlan, intervals: unknown[][], sort: SortSpec, state: IndexScanState): CandidateSource {
  const { index } = plan;
  const { need, docs, stats, work } = state;
  // Each sort key is an index field (bound or not) or the `_id` every entry carries.
  const positions = sort.keys.map((k) => index.fields.indexOf(k.field));
  const compare = (a: IndexEntry, b: IndexEntry) => {
    for (let i = 0; i < positions.length; i++) {
      const p = positions[i];
      const r = p < 0 ? compareBson(a.id, b.id) : compareBson(a.k[p], b.k[p], index.collator);
      if (r !== 0) return r * sort.keys[i].dir;
    }
    return 0;
  };
  const streams = intervals.map((interval) => {
    const [from, to] = index.bounds(interval, plan.range?.low, plan.range?.high, plan.rangeRank);
    let live: Iterator<IndexEntry> | null = index.entries.range(from, to, plan.reverse);
    let copied: IndexEntry[] = [];
    let at = 0;
    return {
      next(): IndexEntry | undefined {
        if (!live) return at < copied.length ? copied[at++] : undefined;
        const r = live.next();
        return r.done ? undefined : r.value;
      },
      copy() {
        if (!live) return;
        copied = [];
        for (let r = live.next(); !r.done; r = live.next()) copied.push(r.value);
        at = 0;
        live = null;
      },
    };
  });
  const heads = streams.map((s) => s.next());
  return {
    next() {
      if (docs.length >= need) return null;
      let best = -1;
      for (let i = 0; i < heads.length; i++) if (heads[i] && (best < 0 || compare(heads[i]!, heads[best]!) < 0)) best = i;
      if (best < 0) return null;
      const entry = heads[best]!;
      heads[best] = streams[best].next();
      if (++stats.keysExamined % DEADLINE_EVERY === 0) work?.checkDeadline();
      return { ik: entry.ik, doc: coll.docs.get(entry.ik), entry };
    },
    detach() {
      for (const s of streams) s.copy();
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
  const runFields = sort
    ? sort.keys
        .slice(0, plan.sortedKeys)
        .map((k) => index.fields.indexOf(k.field))
        .filter((i) => i >= 0)
    : [];
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
    const [from, to] = index.bounds(intervals[next++], plan.range?.low, plan.range?.high, plan.rangeRank);
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
