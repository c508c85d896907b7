import { describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { AttributeRule } from '../attributes/attribute-values.js';
import { explainFilter, matchesFilter, parseFilter, toMongoQuery, type FilterSchema, type MongoQuery } from './index.js';

const rules = (...list: AttributeRule[]) => new Map(list.map((rule) => [rule.key, rule]));
const conversations: FilterSchema = {
  model: 'conversation',
  attributes: rules(
    { key: 'order_number', type: 'text', options: [], archived: false },
    { key: 'amount', type: 'number', options: [], archived: false },
    { key: 'due', type: 'date', options: [], archived: false },
    { key: 'refund', type: 'boolean', options: [], archived: false },
    { key: 'reason', type: 'list', options: ['damaged', 'late'], archived: true },
  ),
  contactAttributes: rules({ key: 'plan', type: 'list', options: ['free', 'pro'], archived: false }),
};
const contacts: FilterSchema = { model: 'contact', attributes: rules({ key: 'seats', type: 'number', options: [], archived: false }) };
const now = new Date('2026-05-10T12:00:00Z');

function problem(schema: FilterSchema, filter: unknown): { field: string; message: string } {
  try {
    parseFilter(schema, filter);
  } catch (error) {
    expect(error).toBeInstanceOf(RequestValidationException);
    return (error as RequestValidationException).problems[0];
  }
  throw new Error('the filter was accepted');
}

describe('parseFilter', () => {
  it.each([
    ['not an object', 'status', 'filter', 'must be a condition'],
    ['an unknown field', { field: 'colour', op: 'eq', value: 'x' }, 'filter.field', 'must be one of status, priority'],
    ['a $-operator as field', { field: '$where', op: 'eq', value: 'x' }, 'filter.field', 'must be one of'],
    ['an undefined attribute', { field: 'attributes.plan', op: 'eq', value: 'x' }, 'filter.field', 'is not a defined attribute'],
    ['an undefined contact attribute', { field: 'contact.attributes.seats', op: 'eq', value: 1 }, 'filter.field', 'is not a defined attribute'],
    [
      'an unknown operator',
      { field: 'status', op: '$regex', value: 'x' },
      'filter.op',
      'must be one of eq, ne, in, nin, exists, contains, startsWith',
    ],
    [
      'an operator of another type',
      { field: 'status', op: 'gt', value: 'x' },
      'filter.op',
      'status takes eq, ne, in, nin, exists, contains, startsWith, not gt',
    ],
    ['contains on a number', { field: 'attributes.amount', op: 'contains', value: '1' }, 'filter.op', 'not contains'],
    ['withinLast on a number', { field: 'csatRating', op: 'withinLast', value: '7d' }, 'filter.op', 'not withinLast'],
    ['a status not listed', { field: 'status', op: 'eq', value: 'open' }, 'filter.value', 'must be one of "bot", "queued", "human", "closed"'],
    ['a number for text', { field: 'subject', op: 'eq', value: 3 }, 'filter.value', 'must be a string'],
    ['an object value', { field: 'subject', op: 'eq', value: { $ne: null } }, 'filter.value', 'must be a string'],
    ['a string for a number', { field: 'csatRating', op: 'gte', value: '4' }, 'filter.value', 'must be a finite number'],
    ['a bad date', { field: 'createdAt', op: 'gt', value: 'yesterday' }, 'filter.value', 'must be a date'],
    ['a bad id', { field: 'assignedAgentId', op: 'eq', value: 'abc' }, 'filter.value', '24-character hex id'],
    ['a bad duration', { field: 'createdAt', op: 'withinLast', value: '7w' }, 'filter.value', 'duration such as "30m"'],
    ['in without a list', { field: 'status', op: 'in', value: 'queued' }, 'filter.value', 'must be a list of 1 to 100'],
    ['a bad element of in', { field: 'status', op: 'in', value: ['queued', 'nope'] }, 'filter.value[1]', 'must be one of'],
    ['between with one bound', { field: 'csatRating', op: 'between', value: [1] }, 'filter.value', 'must be [from, to]'],
    ['between reversed', { field: 'csatRating', op: 'between', value: [5, 1] }, 'filter.value', 'from not after to'],
    ['exists with a string', { field: 'teamId', op: 'exists', value: 'yes' }, 'filter.value', 'must be true or false'],
    ['a missing value', { field: 'status', op: 'eq' }, 'filter.value', 'is missing'],
    ['an extra key', { field: 'status', op: 'eq', value: 'bot', $where: '1' }, 'filter.$where', 'is not part of a condition'],
    ['an option not listed', { field: 'contact.attributes.plan', op: 'eq', value: 'gold' }, 'filter.value', 'must be one of "free", "pro"'],
    ['an empty and', { and: [] }, 'filter.and', 'non-empty list'],
    ['and beside or', { and: [{ field: 'status', op: 'eq', value: 'bot' }], or: [] }, 'filter.or', 'is not allowed beside and'],
  ])('refuses %s, naming its place', (_, filter, field, message) => {
    const found = problem(conversations, filter);
    expect(found.field).toBe(field);
    expect(found.message).toContain(message);
  });

  it('names the place of a nested error', () => {
    const filter = {
      or: [
        {
          and: [
            { field: 'status', op: 'eq', value: 'bot' },
            { field: 'priority', op: 'eq', value: 'high' },
            { field: 'status', op: 'between', value: 1 },
          ],
        },
      ],
    };
    expect(problem(conversations, filter)).toEqual({ field: 'filter.or[0].and[2].op', message: expect.stringContaining('not between') });
  });

  it('takes 4 levels of and/or, not 5', () => {
    const leaf = { field: 'status', op: 'eq', value: 'bot' };
    const nest = (levels: number): unknown => (levels === 0 ? leaf : { and: [nest(levels - 1)] });
    expect(() => parseFilter(conversations, nest(4))).not.toThrow();
    expect(problem(conversations, nest(5))).toEqual({
      field: 'filter.and[0].and[0].and[0].and[0].and',
      message: expect.stringContaining('at most 4 levels'),
    });
  });

  it('takes 30 conditions, not 31', () => {
    const leaves = (n: number) => ({ or: Array.from({ length: n }, () => ({ field: 'status', op: 'eq', value: 'bot' })) });
    expect(() => parseFilter(conversations, leaves(30))).not.toThrow();
    expect(problem(conversations, leaves(31))).toEqual({ field: 'filter.or[30]', message: expect.stringContaining('at most 30 conditions') });
  });

  it('takes the contact fields on contacts only', () => {
    expect(() => parseFilter(contacts, { field: 'email', op: 'contains', value: 'example' })).not.toThrow();
    expect(() => parseFilter(contacts, { field: 'attributes.seats', op: 'gte', value: 3 })).not.toThrow();
    expect(problem(contacts, { field: 'status', op: 'eq', value: 'bot' }).message).toContain(
      'must be one of name, email, phone, tags, createdAt, attributes.<key>',
    );
  });
});

describe('toMongoQuery', () => {
  const query = (filter: unknown, contactIds?: (q: MongoQuery, path: string) => Promise<Types.ObjectId[]>) =>
    toMongoQuery(parseFilter(conversations, filter), { now, contactIds });

  it('builds only operators of the list, values in stored types', async () => {
    const agent = new Types.ObjectId().toHexString();
    expect(
      await query({
        and: [
          { field: 'status', op: 'in', value: ['queued', 'human'] },
          { field: 'assignedAgentId', op: 'eq', value: agent },
          { field: 'subject', op: 'contains', value: 'a.b' },
          { field: 'createdAt', op: 'withinLast', value: '1d' },
          { field: 'attributes.due', op: 'between', value: ['2026-01-01', '2026-02-01T00:00:00Z'] },
          { field: 'snoozed', op: 'eq', value: true },
          { field: 'slaBreached', op: 'ne', value: true },
          { field: 'teamId', op: 'exists', value: false },
        ],
      }),
    ).toEqual({
      status: { $in: ['queued', 'human'] },
      assignedAgentId: { $eq: new Types.ObjectId(agent) },
      subject: { $regex: 'a\\.b', $options: 'i' },
      createdAt: { $gte: new Date('2026-05-09T12:00:00Z') },
      'attributes.due': { $gte: new Date('2026-01-01T00:00:00Z'), $lte: new Date('2026-02-01T00:00:00Z') },
      snoozedUntil: { $ne: null },
      'sla.breaches.0': { $exists: false },
      teamId: null,
    });
  });

  it('keeps an and of conditions on one field, or of several or groups, as $and', async () => {
    const statuses = (a: string, b: string) => ({
      or: [
        { field: 'status', op: 'eq', value: a },
        { field: 'status', op: 'eq', value: b },
      ],
    });
    expect(
      await query({
        and: [
          { field: 'priority', op: 'ne', value: 'low' },
          { field: 'priority', op: 'ne', value: 'high' },
        ],
      }),
    ).toEqual({ $and: [{ priority: { $ne: 'low' } }, { priority: { $ne: 'high' } }] });
    expect(await query({ and: [statuses('bot', 'queued'), statuses('queued', 'human')] })).toEqual({
      $and: [
        { $or: [{ status: { $eq: 'bot' } }, { status: { $eq: 'queued' } }] },
        { $or: [{ status: { $eq: 'queued' } }, { status: { $eq: 'human' } }] },
      ],
    });
  });

  it('resolves contact conditions to the ids of the matching contacts, naming the condition', async () => {
    const ids = [new Types.ObjectId()];
    const asked: [MongoQuery, string][] = [];
    const result = await query({ or: [{ field: 'contact.attributes.plan', op: 'eq', value: 'pro' }] }, async (q, path) => {
      asked.push([q, path]);
      return ids;
    });
    expect(asked).toEqual([[{ 'attributes.plan': { $eq: 'pro' } }, 'filter.or[0]']]);
    expect(result).toEqual({ contactId: { $in: ids } });
  });
});

describe('matchesFilter and explainFilter', () => {
  const team = new Types.ObjectId();
  const record = {
    status: 'queued',
    priority: 'high',
    channel: 'whatsapp',
    teamId: team,
    assignedAgentId: null,
    tags: ['vip', 'refund'],
    subject: 'Refund for Order 1042',
    createdAt: new Date('2026-05-10T06:00:00Z'),
    lastMessageAt: null,
    queuedAt: new Date('2026-05-01T00:00:00Z'),
    snoozedUntil: null,
    sla: { breaches: ['first_response'] },
    csat: { rating: 4 },
    attributes: { amount: 30, due: new Date('2026-05-20T00:00:00Z'), refund: true },
  };
  const contact = { tags: ['gold'], attributes: { plan: 'pro' } };
  const matches = (filter: unknown) => matchesFilter(parseFilter(conversations, filter), { record, contact }, { now });

  it.each([
    [{ field: 'tags', op: 'eq', value: 'vip' }, true],
    [{ field: 'tags', op: 'ne', value: 'vip' }, false],
    [{ field: 'tags', op: 'nin', value: ['spam'] }, true],
    [{ field: 'status', op: 'in', value: ['bot', 'queued'] }, true],
    [{ field: 'subject', op: 'contains', value: 'ORDER' }, true],
    [{ field: 'subject', op: 'startsWith', value: 'refund' }, true],
    [{ field: 'subject', op: 'startsWith', value: 'order' }, false],
    [{ field: 'teamId', op: 'eq', value: team.toHexString() }, true],
    [{ field: 'assignedAgentId', op: 'exists', value: false }, true],
    [{ field: 'assignedAgentId', op: 'ne', value: team.toHexString() }, true],
    [{ field: 'lastMessageAt', op: 'lt', value: '2030-01-01' }, false],
    [{ field: 'createdAt', op: 'withinLast', value: '12h' }, true],
    [{ field: 'createdAt', op: 'withinLast', value: '5h' }, false],
    [{ field: 'queuedAt', op: 'olderThan', value: '7d' }, true],
    [{ field: 'csatRating', op: 'between', value: [4, 5] }, true],
    [{ field: 'csatRating', op: 'gt', value: 4 }, false],
    [{ field: 'snoozed', op: 'eq', value: false }, true],
    [{ field: 'slaBreached', op: 'eq', value: true }, true],
    [{ field: 'attributes.amount', op: 'gte', value: 30 }, true],
    [{ field: 'attributes.order_number', op: 'ne', value: '1' }, true],
    [{ field: 'attributes.order_number', op: 'eq', value: '1' }, false],
    [{ field: 'attributes.due', op: 'between', value: ['2026-05-20', '2026-05-21'] }, true],
    [{ field: 'attributes.refund', op: 'eq', value: true }, true],
    [{ field: 'contact.tags', op: 'eq', value: 'gold' }, true],
    [{ field: 'contact.attributes.plan', op: 'in', value: ['free'] }, false],
  ])('%j matches: %s', (filter, expected) => {
    expect(matches(filter)).toBe(expected);
  });

  it('explains each condition by its place, evaluating every one', () => {
    const filter = parseFilter(conversations, {
      or: [
        { field: 'status', op: 'eq', value: 'queued' },
        {
          and: [
            { field: 'priority', op: 'eq', value: 'low' },
            { field: 'tags', op: 'eq', value: 'vip' },
          ],
        },
      ],
    });
    expect(explainFilter(filter, { record, contact }, { now })).toEqual({
      matched: true,
      conditions: [
        { path: 'filter.or[0]', matched: true },
        { path: 'filter.or[1].and[0]', matched: false },
        { path: 'filter.or[1].and[1]', matched: true },
      ],
    });
  });
});
