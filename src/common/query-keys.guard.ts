import type { CanActivate, ExecutionContext } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import type { Request } from 'express';
import { MAX_LISTED_PROBLEMS } from './errors/error-budget.js';
import { RequestValidationException } from './errors/request-validation.exception.js';

/** The query parameters a handler reads: null when it takes the whole query (its DTO's validation refuses the rest). */
type DeclaredQuery = ReadonlySet<string> | null;

const declared = new WeakMap<object, DeclaredQuery>();

interface RouteArgument {
  index: number;
  data?: unknown;
}

function declaredQuery(context: ExecutionContext): DeclaredQuery {
  const handler = context.getHandler();
  let query = declared.get(handler);
  if (query === undefined) {
    const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, context.getClass(), handler.name) ?? {}) as Record<string, RouteArgument>;
    const names = new Set<string>();
    query = names;
    for (const [key, argument] of Object.entries(args)) {
      if (Number(key.split(':')[0]) !== RouteParamtypes.QUERY) continue;
      if (typeof argument.data !== 'string') {
        query = null;
        break;
      }
      names.add(argument.data);
    }
    declared.set(handler, query);
  }
  return query;
}

/**
 * Unknown query parameters are refused on every route (docs/api-conventions.md), not only on those with a query DTO:
 * `/v1/agents/me?x=1` or `/health?$where=1` used to answer 200. A route that takes the whole query leaves the check to
 * its DTO's validation (unknown names and `$` keys refused there); the others accept only the names they read.
 */
export class QueryKeysGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const query = declaredQuery(context);
    if (query === null) return true;
    const request = context.switchToHttp().getRequest<Request>();
    const unknown = Object.keys(request.query as object).filter((name) => !query.has(name));
    if (unknown.length === 0) return true;
    const listed = unknown.slice(0, MAX_LISTED_PROBLEMS).map((field) => ({ field, message: `${field} is not a parameter of this query` }));
    throw new RequestValidationException(listed, unknown.length - listed.length);
  }
}
