/**
 * explain for find, count, distinct and aggregate: runs the read and reports the plan the planner actually used
 * and what it examined (keys, documents), so tests can prove that a query used an index and stopped early.
 */
import type { Document } from 'bson';
import { isPlainObject } from '../bson-values.js';
import { failedToParse, notSupported } from '../errors.js';
import type { ExecutionStats } from '../query/planner.js';
import { then, type Maybe } from '../query/work.js';
import { runAggregate } from './aggregate.js';
import { collectionName, type CommandContext, type CommandHandler } from './context.js';
import { findRequest, readDocuments, runFind } from './read.js';

function planStage(stats: ExecutionStats, keyPattern: Document | undefined): Document {
  let stage: Document;
  if (stats.stage === 'COUNT_SCAN') {
    return { stage: 'COUNT', inputStage: { stage: 'COUNT_SCAN', indexName: stats.indexName, keyPattern } };
  }
  if (stats.stage === 'IXSCAN') {
    const scan = { stage: 'IXSCAN', indexName: stats.indexName, keyPattern, direction: stats.direction, intervals: stats.intervals };
    // One index scan per interval, their orders merged, as MongoDB plans a sorted `$in`.
    const input = stats.sortMerge
      ? { stage: 'SORT_MERGE', inputStages: Array.from({ length: stats.intervals ?? 1 }, () => ({ ...scan, intervals: 1 })) }
      : scan;
    stage = { stage: 'FETCH', inputStage: input };
  } else {
    stage = { stage: stats.stage };
  }
  return stats.inMemorySort ? { stage: 'SORT', inputStage: stage } : stage;
}

function explainReply(ctx: CommandContext, name: string, stats: ExecutionStats | null, command: Document): Document {
  const keyPattern = stats?.indexName ? ctx.engine.collection(ctx.db, name)?.indexes.get(stats.indexName)?.spec.key : undefined;
  const winningPlan = stats ? planStage(stats, keyPattern as Document | undefined) : { stage: 'EOF' };
  const indexes = ctx.engine.collection(ctx.db, name)?.indexes;
  const rejectedPlans = (stats?.rejectedPlans ?? []).map((indexName) => ({
    stage: 'FETCH',
    inputStage: { stage: 'IXSCAN', indexName, keyPattern: indexes?.get(indexName)?.spec.key },
  }));
  return {
    queryPlanner: { namespace: `${ctx.db}.${name}`, winningPlan, rejectedPlans },
    executionStats: {
      executionSuccess: true,
      nReturned: stats?.nReturned ?? 0,
      totalKeysExamined: stats?.keysExamined ?? 0,
      totalDocsExamined: stats?.docsExamined ?? 0,
      executionStages: winningPlan,
    },
    command,
    serverInfo: { host: 'embedded', version: '7.0.0' },
  };
}

/** Explains one read command given as a body (`{ find: ... }`, `{ aggregate: ... }`, ...). */
export function explainBody(ctx: CommandContext, body: Document): Maybe<Document> {
  const inner: CommandContext = { ...ctx, body };
  const command = Object.keys(body)[0];
  switch (command) {
    case 'find':
      return then(runFind(inner), ({ name, stats }) => explainReply(ctx, name, stats, body));
    case 'count':
    case 'distinct': {
      const name = collectionName(inner, command);
      return then(readDocuments(inner, name, { ...findRequest(inner, name, 'query'), countOnly: command === 'count' }), ({ stats }) =>
        explainReply(ctx, name, stats, body),
      );
    }
    case 'aggregate':
      return then(runAggregate(inner), ({ stats }) => explainReply(ctx, String(body.aggregate), stats, body));
    default:
      throw notSupported(`explain of '${command}' is not supported by the embedded engine (find, count, distinct, aggregate)`);
  }
}

const explain: CommandHandler = (ctx) => {
  const body = ctx.body.explain;
  if (!isPlainObject(body)) throw failedToParse('explain command requires a nested object');
  return explainBody(ctx, { ...body, $db: ctx.db });
};

export const explainCommands: Record<string, CommandHandler> = { explain };
