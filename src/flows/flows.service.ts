import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { Types, type QueryFilter } from 'mongoose';
import { AgentsRepository } from '../agents/agents.repository.js';
import { RequestValidationException, type FieldProblem } from '../common/errors/request-validation.exception.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { FlowExecutionSnapshot } from '../events/domain-events.js';
import type { ExecuteFlowDto } from './dto/execute-flow.dto.js';
import type { FlowStepDto } from './dto/flow-steps.dto.js';
import { DeletedFlowView, FlowView } from './flow.view.js';
import type { ListFlowsQueryDto } from './dto/list-flows-query.dto.js';
import type { WriteFlowDto } from './dto/write-flow.dto.js';
import { isBuiltInStep, MAX_FLOWS_PER_COMPANY, type Flow, type FlowStep } from './flow.schema.js';
import { FlowRunner } from './flow-runner.js';
import { FlowsRepository } from './flows.repository.js';
import { normalizeKeywords } from './keyword-match.js';
import { changesMade, stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';

/** A plain copy without the fields left out, at every level (a step's `template` is an object). */
function withoutOmitted(value: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .map(([key, field]) => [key, field !== null && typeof field === 'object' && !Array.isArray(field) ? withoutOmitted(field) : field]),
  );
}

/** The step as stored: its own fields, without the ones left out. */
function toStep(step: FlowStepDto): FlowStep {
  return withoutOmitted(step) as FlowStep;
}

@Injectable()
export class FlowsService {
  constructor(
    private readonly flows: FlowsRepository,
    private readonly agents: AgentsRepository,
    private readonly conversations: ConversationsService,
    private readonly runner: FlowRunner,
    private readonly audit: AuditTrail,
  ) {}

  async list(companyId: CompanyId, query: ListFlowsQueryDto): Promise<Page<FlowView>> {
    const filter: QueryFilter<Flow> = query.isActive === undefined ? {} : { isActive: query.isActive };
    return mapPage(await this.flows.page(companyId, filter, { limit: query.limit, cursor: query.cursor }), FlowView.from);
  }

  async get(companyId: CompanyId, id: string): Promise<FlowView> {
    return FlowView.from(await this.findStored(companyId, id));
  }

  async create(companyId: CompanyId, dto: WriteFlowDto, origin: AuditOrigin): Promise<FlowView> {
    const flow = await this.toFlow(companyId, dto);
    if ((await this.flows.count(companyId)) >= MAX_FLOWS_PER_COMPANY) {
      throw new BadRequestException(`A company can have at most ${MAX_FLOWS_PER_COMPANY} flows`);
    }
    const _id = new Types.ObjectId();
    const entry = stageAudit(origin, 'flow.created', { type: 'flow', id: _id.toHexString() }, changesMade(null, flow));
    const created = await this.flows.create(companyId, { _id, ...flow, pendingAudit: [entry] } as Partial<Flow>);
    this.audit.written(companyId, this.flows.collectionName, _id, [entry]);
    return FlowView.from(created);
  }

  /** PUT: every field is replaced; what the body leaves out takes its default again. */
  async replace(companyId: CompanyId, id: string, dto: WriteFlowDto, origin: AuditOrigin): Promise<FlowView> {
    const current = await this.findStored(companyId, id);
    const flow = await this.toFlow(companyId, dto);
    const entry = stageAudit(origin, 'flow.replaced', { type: 'flow', id: current._id.toHexString() }, changesMade(current, flow));
    const replaced = await this.flows.updateOne(companyId, { _id: current._id }, withAudit({ $set: flow }, entry));
    if (replaced) this.audit.written(companyId, this.flows.collectionName, current._id, [entry]);
    return FlowView.from(replaced ?? this.notFound(id));
  }

  /** Its past executions stay: they are the history analytics counts. */
  async remove(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<DeletedFlowView> {
    const _id = parseObjectId(id);
    if (!_id) this.notFound(id);
    const entry = stageAudit(origin, 'flow.deleted', { type: 'flow', id: _id.toHexString() });
    if (!(await this.flows.removeAudited(companyId, { _id }, entry))) this.notFound(id);
    this.audit.written(companyId, this.flows.collectionName, _id, [entry]);
    return { id: _id.toHexString(), deleted: true };
  }

  /**
   * Runs the flow on the conversation now. 400 when the flow is inactive, the conversation is closed,
   * or `conversationId` names no conversation of the company (a body field, so 400 rather than 404).
   */
  async execute(companyId: CompanyId, id: string, dto: ExecuteFlowDto): Promise<FlowExecutionSnapshot> {
    const flow = await this.findStored(companyId, id);
    if (!flow.isActive) throw new BadRequestException(`Flow ${id} is inactive; activate it to run it`);
    const conversation = await this.conversations.find(companyId, dto.conversationId);
    if (!conversation) {
      throw new RequestValidationException([
        { field: 'conversationId', message: `conversation ${dto.conversationId} not found` },
      ]);
    }
    if (conversation.status === 'closed') {
      throw new BadRequestException(`Conversation ${conversation.id} is closed; flows cannot run on it`);
    }
    return this.runner.run(companyId, flow, conversation);
  }

  /** Checks what the DTO cannot: keywords only on inbound triggers, assigned agents of the company. */
  private async toFlow(companyId: CompanyId, dto: WriteFlowDto): Promise<Partial<Flow>> {
    const problems: FieldProblem[] = [];
    const trigger = dto.trigger ?? { type: 'manual' as const };
    if (trigger.type === 'manual' && trigger.keywords?.length) {
      problems.push({ field: 'trigger.keywords', message: 'keywords apply only to inbound_message triggers' });
    }
    const steps = dto.steps.map(toStep);
    for (const [index, step] of steps.entries()) {
      if (isBuiltInStep(step) && step.type === 'assign' && step.agentId && !(await this.agents.findById(companyId, step.agentId, { _id: 1 }))) {
        problems.push({ field: `steps.${index}.agentId`, message: `agent ${step.agentId} not found` });
      }
    }
    if (problems.length > 0) throw new RequestValidationException(problems);
    return {
      name: dto.name,
      description: dto.description ?? null,
      isActive: dto.isActive ?? true,
      trigger: { type: trigger.type, keywords: normalizeKeywords(trigger.keywords ?? []) },
      steps,
    };
  }

  private async findStored(companyId: CompanyId, id: string): Promise<Stored<Flow>> {
    return (await this.flows.findById(companyId, id)) ?? this.notFound(id);
  }

  private notFound(id: string): never {
    throw new NotFoundException(`Flow ${id} not found`);
  }
}
