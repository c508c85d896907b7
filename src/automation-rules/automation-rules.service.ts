import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { AgentsRepository } from '../agents/agents.repository.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import type { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { canTransition } from '../conversations/conversation-transitions.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { assertSnoozable } from '../conversations/snooze/snooze-changes.js';
import { Types } from 'mongoose';
import { changesMade, stageAudit, type AuditChanges, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import { parseObjectId } from '../database/object-id.js';
import { insertWithinCap } from '../database/tenancy/insert-within-cap.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { FlowsRepository } from '../flows/flows.repository.js';
import { TeamsRepository } from '../teams/teams.repository.js';
import { MAX_RULES_PER_COMPANY, type AutomationRule, type RuleAction } from './automation-rule.schema.js';
import { AutomationRuleView, DeletedAutomationRuleView } from './automation-rule.view.js';
import { AutomationRulesRepository } from './automation-rules.repository.js';
import { AutomationRunView } from './automation-run.view.js';
import { AutomationRunsRepository } from './automation-runs.repository.js';
import type { CreateAutomationRuleDto, UpdateAutomationRuleDto } from './dto/automation-rule.dto.js';
import { RuleChecks } from './rule-checks.js';
import { RuleRunner } from './rule-runner.js';

/** The answer of a dry run: whether the rule would match the conversation now, and what each action would do. */
export class RuleTestView {
  matched: boolean;
  conditions: { path: string; matched: boolean }[];
  actions: { type: string; wouldApply: boolean; reason?: string }[];
}

/**
 * Automation rules (contract section 21): every part checked before anything is stored (400 naming the field), at
 * most MAX_RULES_PER_COMPANY per company, `version` moved by every edit (timers of an older version do nothing).
 */
@Injectable()
export class AutomationRulesService {
  constructor(
    private readonly rules: AutomationRulesRepository,
    private readonly runs: AutomationRunsRepository,
    private readonly checks: RuleChecks,
    private readonly runner: RuleRunner,
    private readonly conversations: ConversationsRepository,
    private readonly teams: TeamsRepository,
    private readonly agents: AgentsRepository,
    private readonly flows: FlowsRepository,
    private readonly audit: AuditTrail,
  ) {}

  async list(companyId: CompanyId, query: PageQueryDto): Promise<Page<AutomationRuleView>> {
    return mapPage(await this.rules.page(companyId, {}, { limit: query.limit, cursor: query.cursor }), AutomationRuleView.from);
  }

  async get(companyId: CompanyId, id: string): Promise<AutomationRuleView> {
    return AutomationRuleView.from(await this.stored(companyId, id));
  }

  async create(companyId: CompanyId, dto: CreateAutomationRuleDto, origin: AuditOrigin): Promise<AutomationRuleView> {
    const record: Partial<AutomationRule> = {
      name: dto.name,
      isActive: dto.isActive ?? true,
      trigger: this.checks.trigger(dto.trigger),
      conditions: await this.checks.conditions(companyId, dto.conditions ?? null),
      actions: await this.checks.actions(companyId, dto.actions),
      stopOnError: dto.stopOnError ?? false,
      version: 1,
    };
    const _id = new Types.ObjectId();
    const entry = stageAudit(origin, 'automation_rule.created', { type: 'automation_rule', id: _id.toHexString() }, ruleChanges(null, record));
    const created = await insertWithinCap({
      cap: MAX_RULES_PER_COMPANY,
      count: () => this.rules.count(companyId),
      insert: () => this.rules.create(companyId, { _id, ...record, pendingAudit: [entry] } as Partial<AutomationRule>),
      undo: async (rule) => void (await this.rules.deleteOne(companyId, { _id: rule._id })),
    });
    if (!created) throw new BadRequestException(`A company can have at most ${MAX_RULES_PER_COMPANY} automation rules`);
    this.audit.written(companyId, this.rules.collectionName, _id, [entry]);
    return AutomationRuleView.from(created);
  }

  async update(companyId: CompanyId, id: string, dto: UpdateAutomationRuleDto, origin: AuditOrigin): Promise<AutomationRuleView> {
    const current = await this.stored(companyId, id);
    const set: Partial<AutomationRule> = {};
    if (dto.name !== undefined) set.name = dto.name;
    if (dto.isActive !== undefined) set.isActive = dto.isActive;
    if (dto.trigger !== undefined) set.trigger = this.checks.trigger(dto.trigger);
    if (dto.conditions !== undefined) set.conditions = await this.checks.conditions(companyId, dto.conditions);
    if (dto.actions !== undefined) set.actions = await this.checks.actions(companyId, dto.actions);
    if (dto.stopOnError !== undefined) set.stopOnError = dto.stopOnError;
    if (Object.keys(set).length === 0) return AutomationRuleView.from(current);
    const entry = stageAudit(
      origin,
      'automation_rule.updated',
      { type: 'automation_rule', id: current._id.toHexString() },
      ruleChanges(current, set),
    );
    const updated = await this.rules.updateOne(companyId, { _id: current._id }, withAudit({ $set: set, $inc: { version: 1 } }, entry));
    if (!updated) throw this.notFound(id);
    this.audit.written(companyId, this.rules.collectionName, current._id, [entry]);
    return AutomationRuleView.from(updated);
  }

  /** Its timers already set find no rule when they fire, and do nothing; its runs stay until they expire. */
  async remove(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<DeletedAutomationRuleView> {
    const _id = parseObjectId(id);
    if (!_id) throw this.notFound(id);
    const entry = stageAudit(origin, 'automation_rule.deleted', { type: 'automation_rule', id: _id.toHexString() });
    if (!(await this.rules.removeAudited(companyId, { _id }, entry))) throw this.notFound(id);
    this.audit.written(companyId, this.rules.collectionName, _id, [entry]);
    return { id: _id.toHexString(), deleted: true };
  }

  async listRuns(companyId: CompanyId, id: string, query: PageQueryDto): Promise<Page<AutomationRunView>> {
    const rule = await this.stored(companyId, id);
    return mapPage(await this.runs.page(companyId, { ruleId: rule._id }, { limit: query.limit, cursor: query.cursor }), AutomationRunView.from);
  }

  /** The dry run: the conditions on the conversation as it is, and whether each action would apply; changes nothing. */
  async test(companyId: CompanyId, id: string, conversationId: string): Promise<RuleTestView> {
    const rule = await this.stored(companyId, id);
    const conversation = await this.conversations.findById(companyId, conversationId);
    if (!conversation) throw new NotFoundException(`Conversation ${conversationId} not found`);
    const { matched, conditions } = await this.runner.evaluate(companyId, rule, conversation);
    const actions = [];
    for (const action of rule.actions) {
      const reason = await this.refusal(companyId, conversation, action);
      actions.push(reason === null ? { type: action.type, wouldApply: true } : { type: action.type, wouldApply: false, reason });
    }
    return { matched, conditions, actions };
  }

  /** Why the action would not apply to the conversation as it is (null: it would), as its service would refuse it. */
  private async refusal(companyId: CompanyId, conversation: Stored<Conversation>, action: RuleAction): Promise<string | null> {
    const { status } = conversation;
    const closed = status === 'closed' ? 'the conversation is closed' : null;
    switch (action.type) {
      case 'assign_team':
        if (!(await this.teams.findById(companyId, action.teamId as string, { _id: 1 }))) return `team ${String(action.teamId)} no longer exists`;
        return status === 'queued' || canTransition(status, 'queued') ? null : `a ${status} conversation cannot move to a queue`;
      case 'assign_agent': {
        const agent = await this.agents.findById(companyId, action.agentId as string);
        if (!agent?.isActive) return `agent ${String(action.agentId)} is not an active agent`;
        return status === 'closed' ? closed : null;
      }
      case 'handoff':
        return canTransition(status, 'queued') ? null : `a ${status} conversation cannot be handed off`;
      case 'close':
        return closed;
      case 'snooze':
        try {
          assertSnoozable(status);
          return null;
        } catch (error) {
          return (error as Error).message;
        }
      case 'send_message':
        return closed;
      case 'run_flow':
        return (await this.flows.findById(companyId, action.flowId as string, { _id: 1 }))
          ? closed
          : `flow ${String(action.flowId)} no longer exists`;
      default:
        return null;
    }
  }

  private async stored(companyId: CompanyId, id: string): Promise<Stored<AutomationRule>> {
    return (await this.rules.findById(companyId, id)) ?? this.notFound(id);
  }

  private notFound(id: string): never {
    throw new NotFoundException(`Automation rule ${id} not found`);
  }
}

/** Conditions and actions may compare with or write a contact's e-mail or phone: named, never shown. */
function ruleChanges(current: Partial<AutomationRule> | null, fields: Partial<AutomationRule>): AuditChanges {
  return changesMade(current, fields, { namesOnly: ['conditions', 'actions'] });
}
