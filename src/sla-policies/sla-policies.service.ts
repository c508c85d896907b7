import { BadRequestException, Injectable, NotFoundException } from '@nestjs/common';
import { Types, type QueryFilter } from 'mongoose';
import { RequestValidationException, type FieldProblem } from '../common/errors/request-validation.exception.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import { parseObjectId } from '../database/object-id.js';
import { insertWithinCap } from '../database/tenancy/insert-within-cap.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { ListSlaPoliciesQueryDto } from './dto/list-sla-policies-query.dto.js';
import type { SlaPolicyFieldsDto } from './dto/sla-policy-fields.dto.js';
import type { CreateSlaPolicyDto, UpdateSlaPolicyDto } from './dto/write-sla-policy.dto.js';
import { SlaPoliciesRepository } from './sla-policies.repository.js';
import { MAX_SLA_POLICIES_PER_COMPANY, type SlaPolicy } from './sla-policy.schema.js';
import { DeletedSlaPolicyView, SlaPolicyView } from './sla-policy.view.js';
import { changesMade, stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';

const TARGETS = ['firstResponseSeconds', 'nextResponseSeconds', 'resolutionSeconds'] as const;

/**
 * SLA policies (contract section 16). A conversation takes the first active policy, oldest first, whose conditions
 * match when it opens and again when its priority changes (service-levels/), and keeps a copy of the targets it
 * took: a change to a policy applies to the conversations matched after it.
 */
@Injectable()
export class SlaPoliciesService {
  constructor(
    private readonly policies: SlaPoliciesRepository,
    private readonly audit: AuditTrail,
  ) {}

  async list(companyId: CompanyId, query: ListSlaPoliciesQueryDto): Promise<Page<SlaPolicyView>> {
    const filter: QueryFilter<SlaPolicy> = query.isActive === undefined ? {} : { isActive: query.isActive };
    return mapPage(await this.policies.page(companyId, filter, { limit: query.limit, cursor: query.cursor }), SlaPolicyView.from);
  }

  async get(companyId: CompanyId, id: string): Promise<SlaPolicyView> {
    return SlaPolicyView.from(await this.findStored(companyId, id));
  }

  async create(companyId: CompanyId, dto: CreateSlaPolicyDto, origin: AuditOrigin): Promise<SlaPolicyView> {
    const policy = checked({
      name: dto.name,
      isActive: dto.isActive ?? true,
      conditions: { priorities: [...new Set(dto.conditions?.priorities ?? [])], channels: [...new Set(dto.conditions?.channels ?? [])] },
      firstResponseSeconds: dto.firstResponseSeconds ?? null,
      nextResponseSeconds: dto.nextResponseSeconds ?? null,
      resolutionSeconds: dto.resolutionSeconds ?? null,
      businessHoursOnly: dto.businessHoursOnly ?? false,
      warnBeforeSeconds: dto.warnBeforeSeconds ?? null,
    });
    // Also under concurrent creates: a policy past the cap would never be matched (SlaPoliciesRepository.active).
    const _id = new Types.ObjectId();
    const entry = stageAudit(origin, 'sla_policy.created', { type: 'sla_policy', id: _id.toHexString() }, changesMade(null, policy));
    const created = await insertWithinCap({
      cap: MAX_SLA_POLICIES_PER_COMPANY,
      count: () => this.policies.count(companyId),
      insert: () => this.policies.create(companyId, { _id, ...policy, pendingAudit: [entry] } as Partial<SlaPolicy>),
      undo: async (inserted) => void (await this.policies.deleteOne(companyId, { _id: inserted._id })),
    });
    if (!created) throw new BadRequestException(`A company can have at most ${MAX_SLA_POLICIES_PER_COMPANY} SLA policies`);
    this.audit.written(companyId, this.policies.collectionName, _id, [entry]);
    return SlaPolicyView.from(created);
  }

  /** Merges the fields sent (null clears a target or the warning), then checks the whole policy as on create. */
  async update(companyId: CompanyId, id: string, dto: UpdateSlaPolicyDto, origin: AuditOrigin): Promise<SlaPolicyView> {
    const current = await this.findStored(companyId, id);
    const set = changesOf(dto);
    if (Object.keys(set).length === 0) return SlaPolicyView.from(current);
    checked({ ...current, ...set });
    const entry = stageAudit(origin, 'sla_policy.updated', { type: 'sla_policy', id: current._id.toHexString() }, changesMade(current, set));
    const updated = await this.policies.updateOne(companyId, { _id: current._id }, withAudit({ $set: set }, entry));
    if (updated) this.audit.written(companyId, this.policies.collectionName, current._id, [entry]);
    return SlaPolicyView.from(updated ?? this.notFound(id));
  }

  async remove(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<DeletedSlaPolicyView> {
    const _id = parseObjectId(id);
    if (!_id) this.notFound(id);
    const entry = stageAudit(origin, 'sla_policy.deleted', { type: 'sla_policy', id: _id.toHexString() });
    if (!(await this.policies.removeAudited(companyId, { _id }, entry))) this.notFound(id);
    this.audit.written(companyId, this.policies.collectionName, _id, [entry]);
    return { id: _id.toHexString(), deleted: true };
  }

  private async findStored(companyId: CompanyId, id: string): Promise<Stored<SlaPolicy>> {
    return (await this.policies.findById(companyId, id)) ?? this.notFound(id);
  }

  private notFound(id: string): never {
    throw new NotFoundException(`SLA policy ${id} not found`);
  }
}

function changesOf(dto: SlaPolicyFieldsDto): Partial<SlaPolicy> {
  const set: Partial<SlaPolicy> = {};
  if (dto.name !== undefined) set.name = dto.name;
  if (dto.isActive !== undefined) set.isActive = dto.isActive;
  if (dto.businessHoursOnly !== undefined) set.businessHoursOnly = dto.businessHoursOnly;
  for (const field of [...TARGETS, 'warnBeforeSeconds'] as const) {
    if (dto[field] !== undefined) set[field] = dto[field];
  }
  if (dto.conditions?.priorities !== undefined) set['conditions.priorities' as 'conditions'] = [...new Set(dto.conditions.priorities)] as never;
  if (dto.conditions?.channels !== undefined) set['conditions.channels' as 'conditions'] = [...new Set(dto.conditions.channels)] as never;
  return set;
}

/** 400 naming the fields: a policy needs a target, and a warning shorter than each of its targets. */
function checked<P extends Pick<SlaPolicy, (typeof TARGETS)[number] | 'warnBeforeSeconds'>>(policy: P): P {
  const problems: FieldProblem[] = [];
  const targets = TARGETS.filter((field) => policy[field] !== null && policy[field] !== undefined);
  if (targets.length === 0) {
    for (const field of TARGETS) {
      problems.push({ field, message: `${field}: a policy needs at least one target (firstResponseSeconds, nextResponseSeconds or resolutionSeconds)` });
    }
  }
  const warn = policy.warnBeforeSeconds;
  const shortest = Math.min(...targets.map((field) => policy[field] as number));
  if (warn !== null && warn !== undefined && targets.length > 0 && warn >= shortest) {
    problems.push({ field: 'warnBeforeSeconds', message: `warnBeforeSeconds must be shorter than every target (the shortest is ${shortest} s)` });
  }
  if (problems.length > 0) throw new RequestValidationException(problems);
  return policy;
}
