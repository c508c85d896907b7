import { Injectable } from '@nestjs/common';
import { AgentsRepository } from '../agents/agents.repository.js';
import { storedValueOf } from '../attributes/attribute-values.js';
import { AttributeDefinitionsService } from '../attributes/attribute-definitions.service.js';
import { CannedResponsesService } from '../canned-responses/canned-responses.service.js';
import { RequestValidationException, type FieldProblem } from '../common/errors/request-validation.exception.js';
import { PRIORITIES } from '../conversations/conversation.schema.js';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { parseDuration } from '../filters/index.js';
import { FlowsRepository } from '../flows/flows.repository.js';
import { FilterCompiler } from '../search/filter-compiler.js';
import { MAX_TAG_LENGTH, MAX_TAGS } from '../tags/tags.js';
import { TeamsRepository } from '../teams/teams.repository.js';
import { RULE_ACTION_TYPES, RULE_EVENTS, TIMER_ANCHORS, type RuleAction, type RuleActionType, type RuleTrigger } from './automation-rule.schema.js';

const MIN_TIMER_MS = 60_000;
const MAX_TIMER_MS = 90 * 86_400_000;
const MAX_SNOOZE_MS = 365 * 86_400_000;
const MAX_TEXT = 4096;

/** The keys each action type takes besides `type` (required ones first; send_message takes exactly one of its three). */
const ACTION_KEYS: Record<RuleActionType, { required: string[]; optional: string[] }> = {
  assign_team: { required: ['teamId'], optional: [] },
  assign_agent: { required: ['agentId'], optional: [] },
  handoff: { required: [], optional: [] },
  set_priority: { required: ['priority'], optional: [] },
  add_tags: { required: ['tags'], optional: [] },
  remove_tags: { required: ['tags'], optional: [] },
  set_attribute: { required: ['key', 'value'], optional: [] },
  send_message: { required: [], optional: ['text', 'cannedResponseId', 'template'] },
  add_note: { required: ['text'], optional: [] },
  snooze: { required: ['for'], optional: [] },
  close: { required: [], optional: ['reason'] },
  run_flow: { required: ['flowId'], optional: [] },
};

const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length >= 1 && value.length <= max;

/**
 * The checks of a rule on save (contract section 21): its trigger, its conditions in the one filter language, and
 * each action's shape, ids (of the company) and values. Every problem is a 400 naming its field; nothing is stored.
 */
@Injectable()
export class RuleChecks {
  constructor(
    private readonly filters: FilterCompiler,
    private readonly teams: TeamsRepository,
    private readonly agents: AgentsRepository,
    private readonly flows: FlowsRepository,
    private readonly cannedResponses: CannedResponsesService,
    private readonly attributes: AttributeDefinitionsService,
  ) {}

  trigger(input: Record<string, unknown>): RuleTrigger {
    const keys = Object.keys(input);
    if (keys.length !== 1 || !['event', 'timer'].includes(keys[0])) {
      throw invalid('trigger', 'trigger must be { event } or { timer: { after, since } }');
    }
    if ('event' in input) {
      if (!(RULE_EVENTS as readonly unknown[]).includes(input.event))
        throw invalid('trigger.event', `trigger.event must be one of ${RULE_EVENTS.join(', ')}`);
      return { event: input.event as RuleTrigger['event'] };
    }
    const timer = input.timer as Record<string, unknown> | null;
    if (typeof timer !== 'object' || timer === null || Array.isArray(timer)) throw invalid('trigger.timer', 'trigger.timer must be { after, since }');
    const extra = Object.keys(timer).find((key) => key !== 'after' && key !== 'since');
    if (extra) throw invalid(`trigger.timer.${extra}`, `trigger.timer.${extra} is not part of a timer: it is { after, since }`);
    const after = parseDuration(timer.after);
    if (after === null || after < MIN_TIMER_MS || after > MAX_TIMER_MS) {
      throw invalid('trigger.timer.after', 'trigger.timer.after must be a duration from "1m" to "90d" (such as "10m", "12h", "3d")');
    }
    if (!(TIMER_ANCHORS as readonly unknown[]).includes(timer.since))
      throw invalid('trigger.timer.since', `trigger.timer.since must be one of ${TIMER_ANCHORS.join(', ')}`);
    return { timer: { after: timer.after as string, since: timer.since as NonNullable<RuleTrigger['timer']>['since'] } };
  }

  /** The filter checked against the company's definitions (400 naming `conditions...`); null stays null. */
  async conditions(companyId: CompanyId, input: Record<string, unknown> | null): Promise<Record<string, unknown> | null> {
    if (input === null) return null;
    await this.filters.parse(companyId, 'conversation', input, 'conditions');
    return input;
  }

  async actions(companyId: CompanyId, input: Record<string, unknown>[]): Promise<RuleAction[]> {
    const problems: FieldProblem[] = [];
    const checked: RuleAction[] = [];
    for (const [index, action] of input.entries()) {
      const path = `actions[${index}]`;
      const problem = await this.action(companyId, action, path);
      if (problem) problems.push(problem);
      else checked.push(action as RuleAction);
    }
    if (problems.length > 0) throw new RequestValidationException(problems);
    return checked;
  }

  private async action(companyId: CompanyId, action: Record<string, unknown>, path: string): Promise<FieldProblem | null> {
    const type = action.type as RuleActionType;
    if (!(RULE_ACTION_TYPES as readonly unknown[]).includes(type))
      return problem(`${path}.type`, `${path}.type must be one of ${RULE_ACTION_TYPES.join(', ')}`);
    const shape = ACTION_KEYS[type];
    const extra = Object.keys(action).find((key) => key !== 'type' && !shape.required.includes(key) && !shape.optional.includes(key));
    if (extra) return problem(`${path}.${extra}`, `${path}.${extra} is not a field of ${type}`);
    const missing = shape.required.find((key) => action[key] === undefined);
    if (missing) return problem(`${path}.${missing}`, `${path}.${missing} is required for ${type}`);
    switch (type) {
      case 'assign_team':
        return (await this.exists(action.teamId, (id) => this.teams.findById(companyId, id, { _id: 1 })))
          ? null
          : problem(`${path}.teamId`, `${path}.teamId must be a team of your company`);
      case 'assign_agent':
        return (await this.exists(action.agentId, (id) => this.agents.findOne(companyId, { _id: parseObjectId(id), isActive: true }, { _id: 1 })))
          ? null
          : problem(`${path}.agentId`, `${path}.agentId must be an active agent of your company`);
      case 'run_flow':
        return (await this.exists(action.flowId, (id) => this.flows.findById(companyId, id, { _id: 1 })))
          ? null
          : problem(`${path}.flowId`, `${path}.flowId must be a flow of your company`);
      case 'set_priority':
        return (PRIORITIES as readonly unknown[]).includes(action.priority)
          ? null
          : problem(`${path}.priority`, `${path}.priority must be one of ${PRIORITIES.join(', ')}`);
      case 'add_tags':
      case 'remove_tags': {
        const tags = action.tags;
        const valid = Array.isArray(tags) && tags.length >= 1 && tags.length <= MAX_TAGS && tags.every((tag) => isText(tag, MAX_TAG_LENGTH));
        return valid ? null : problem(`${path}.tags`, `${path}.tags must be 1 to ${MAX_TAGS} tags of 1 to ${MAX_TAG_LENGTH} characters`);
      }
      case 'set_attribute':
        return this.attribute(companyId, action, path);
      case 'send_message':
        return this.message(companyId, action, path);
      case 'add_note':
        return isText(action.text, MAX_TEXT) ? null : problem(`${path}.text`, `${path}.text must be 1 to ${MAX_TEXT} characters`);
      case 'snooze': {
        const ms = parseDuration(action.for);
        return ms !== null && ms <= MAX_SNOOZE_MS
          ? null
          : problem(`${path}.for`, `${path}.for must be a duration such as "30m", "12h" or "3d" (at most a year)`);
      }
      case 'close':
        return action.reason === undefined || isText(action.reason, 200)
          ? null
          : problem(`${path}.reason`, `${path}.reason must be 1 to 200 characters`);
      case 'handoff':
        return null;
    }
  }

  private async attribute(companyId: CompanyId, action: Record<string, unknown>, path: string): Promise<FieldProblem | null> {
    if (typeof action.key !== 'string') return problem(`${path}.key`, `${path}.key must be a conversation attribute key`);
    const rule = (await this.attributes.rulesOf(companyId, 'conversation')).get(action.key);
    if (!rule) return problem(`${path}.key`, `${path}.key: ${action.key} is not a defined conversation attribute of your company`);
    if (action.value === null) return null;
    const stored = storedValueOf(rule, action.value);
    return 'expected' in stored ? problem(`${path}.value`, `${path}.value must be ${stored.expected} (${action.key} is ${rule.type})`) : null;
  }

  private async message(companyId: CompanyId, action: Record<string, unknown>, path: string): Promise<FieldProblem | null> {
    const given = ['text', 'cannedResponseId', 'template'].filter((key) => action[key] !== undefined);
    if (given.length !== 1) return problem(path, `${path} must have exactly one of text, cannedResponseId, template`);
    if (given[0] === 'text')
      return isText(action.text, MAX_TEXT) ? null : problem(`${path}.text`, `${path}.text must be 1 to ${MAX_TEXT} characters`);
    if (given[0] === 'cannedResponseId') {
      const found = await this.exists(action.cannedResponseId, (id) => this.cannedResponses.get(companyId, id).catch(() => null));
      return found ? null : problem(`${path}.cannedResponseId`, `${path}.cannedResponseId must be a canned response of your company`);
    }
    const template = action.template as Record<string, unknown> | null;
    const valid = typeof template === 'object' && template !== null && isText(template.name, 512) && isText(template.language, 35);
    return valid ? null : problem(`${path}.template`, `${path}.template must be { name, language, variables? } of an approved template`);
  }

  private async exists(id: unknown, find: (id: string) => Promise<unknown>): Promise<boolean> {
    return typeof id === 'string' && parseObjectId(id) !== null && (await find(id)) !== null;
  }
}

function problem(field: string, message: string): FieldProblem {
  return { field, message };
}

function invalid(field: string, message: string): RequestValidationException {
  return new RequestValidationException([problem(field, message)]);
}
