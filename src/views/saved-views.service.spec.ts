import { describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { AttributeDefinitionsService } from '../attributes/attribute-definitions.service.js';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { Clock } from '../lanes/clock.js';
import { FilterCompiler } from '../search/filter-compiler.js';
import { MAX_EXACT_COUNT, SavedViewsService } from './saved-views.service.js';

const agent: AgentPrincipal = {
  kind: 'agent',
  agentId: new Types.ObjectId().toHexString(),
  companyId: new Types.ObjectId().toHexString(),
  role: 'agent',
};

type Counted = number | 'invalid';

/**
 * The service over the real filter compiler and stand-in stores: conversation views on `attributes.tier` and contact
 * views on `attributes.plan` (both defined), each counting as given per value; an 'invalid' view compares an attribute
 * no longer defined. It records the cap each count asked for and every read of the definitions.
 */
function serviceCounting(conversations: Record<string, Counted>, contacts: Record<string, Counted> = {}) {
  const viewOf = (model: string, key: string, value: string, counted: Counted) => ({
    _id: new Types.ObjectId(),
    name: value,
    model,
    filter: { field: counted === 'invalid' ? 'attributes.gone' : `attributes.${key}`, op: 'eq', value },
    visibility: 'company',
  });
  const views = [
    ...Object.entries(conversations).map(([value, counted]) => viewOf('conversation', 'tier', value, counted)),
    ...Object.entries(contacts).map(([value, counted]) => viewOf('contact', 'plan', value, counted)),
  ];
  const rule = (key: string) => ({ key, type: 'text', options: [], archived: false });
  const definitions = { conversation: new Map([['tier', rule('tier')]]), contact: new Map([['plan', rule('plan')]]) };
  const definitionReads: unknown[] = [];
  const attributes = new AttributeDefinitionsService(
    {
      rules: async (company: unknown) => {
        definitionReads.push(company);
        return definitions;
      },
    } as never,
    {} as never,
    {} as never,
  );
  const asked: number[] = [];
  const countUpTo = (counts: Record<string, Counted>) => async (_company: unknown, query: Record<string, unknown>, cap: number) => {
    asked.push(cap);
    const value = ((query['attributes.tier'] ?? query['attributes.plan']) as { $eq: string }).$eq;
    return Math.min(counts[value] as number, cap);
  };
  const service = new SavedViewsService(
    { findPlain: async (_company: unknown, filter: { visibility: string }) => (filter.visibility === 'company' ? views : []) } as never,
    new FilterCompiler(attributes, {} as never, new Clock()),
    {} as never,
    { countUpTo: countUpTo(conversations) } as never,
    { countUpTo: countUpTo(contacts) } as never,
    {} as never,
  );
  return { service, views, asked, definitionReads };
}

describe('SavedViewsService.counts', () => {
  it(`is exact up to ${MAX_EXACT_COUNT} and capped beyond, counting no further than one past it`, async () => {
    const { service, views, asked } = serviceCounting({ few: 3, exact: MAX_EXACT_COUNT, many: 250_000, invalid: 'invalid' }, { pro: 7 });
    expect(await service.counts(agent)).toEqual([
      { viewId: views[0]._id.toHexString(), count: 3, capped: false },
      { viewId: views[1]._id.toHexString(), count: MAX_EXACT_COUNT, capped: false },
      { viewId: views[2]._id.toHexString(), count: MAX_EXACT_COUNT, capped: true },
      { viewId: views[3]._id.toHexString(), count: 0, capped: false },
      { viewId: views[4]._id.toHexString(), count: 7, capped: false },
    ]);
    expect(asked).toEqual([MAX_EXACT_COUNT + 1, MAX_EXACT_COUNT + 1, MAX_EXACT_COUNT + 1, MAX_EXACT_COUNT + 1]);
  });

  it('reads the definitions once for all the views, of both models', async () => {
    const { service, definitionReads } = serviceCounting({ gold: 1, silver: 2, bronze: 3 }, { pro: 4, free: 5 });
    await service.counts(agent);
    expect(definitionReads).toHaveLength(1);
  });
});
