import { describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { MAX_EXACT_COUNT, SavedViewsService } from './saved-views.service.js';

const agent: AgentPrincipal = {
  kind: 'agent',
  agentId: new Types.ObjectId().toHexString(),
  companyId: new Types.ObjectId().toHexString(),
  role: 'agent',
};

/** The service over stand-ins: views as given, conversation counts as given per view name, the cap each count asked for. */
function serviceCounting(counts: Record<string, number | 'invalid'>) {
  const views = Object.keys(counts).map((name) => ({
    _id: new Types.ObjectId(),
    name,
    model: 'conversation',
    filter: { name },
    visibility: 'company',
  }));
  const asked: number[] = [];
  const service = new SavedViewsService(
    { find: async (_company: unknown, filter: { visibility: string }) => (filter.visibility === 'company' ? views : []) } as never,
    {
      parse: async (_company: unknown, _model: unknown, filter: { name: string }) => {
        if (counts[filter.name] === 'invalid') throw new RequestValidationException([{ field: 'filter.field', message: 'gone' }]);
        return filter;
      },
      query: async (_company: unknown, filter: { name: string }) => filter,
    } as never,
    {} as never,
    {
      countUpTo: async (_company: unknown, query: { name: string }, cap: number) => {
        asked.push(cap);
        return Math.min(counts[query.name] as number, cap);
      },
    } as never,
    {} as never,
    {} as never,
  );
  return { service, views, asked };
}

describe('SavedViewsService.counts', () => {
  it(`is exact up to ${MAX_EXACT_COUNT} and capped beyond, counting no further than one past it`, async () => {
    const { service, views, asked } = serviceCounting({ few: 3, exact: MAX_EXACT_COUNT, many: 250_000, invalid: 'invalid' });
    expect(await service.counts(agent)).toEqual([
      { viewId: views[0]._id.toHexString(), count: 3, capped: false },
      { viewId: views[1]._id.toHexString(), count: MAX_EXACT_COUNT, capped: false },
      { viewId: views[2]._id.toHexString(), count: MAX_EXACT_COUNT, capped: true },
      { viewId: views[3]._id.toHexString(), count: 0, capped: false },
    ]);
    expect(asked).toEqual([MAX_EXACT_COUNT + 1, MAX_EXACT_COUNT + 1, MAX_EXACT_COUNT + 1]);
  });
});
