import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { insertWithinCap } from '../database/tenancy/insert-within-cap.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import {
  MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL,
  type AttributeDefinition,
  type AttributeModel,
  type AttributeType,
} from './attribute-definition.schema.js';
import { AttributeDefinitionView, DeletedAttributeDefinitionView } from './attribute-definition.view.js';
import { AttributeDefinitionsRepository, type RulesByModel } from './attribute-definitions.repository.js';
import {
  ATTRIBUTE_VALUES_REMOVED,
  checkAttributePatch,
  type AttributePatch,
  type AttributeRule,
  type AttributeValuesRemoved,
} from './attribute-values.js';
import type { CreateAttributeDefinitionDto } from './dto/create-attribute-definition.dto.js';
import type { UpdateAttributeDefinitionDto } from './dto/update-attribute-definition.dto.js';
import { changesMade, stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import { Types } from 'mongoose';

/**
 * Attribute definitions (contract section 20): unique per model and key (the unique index refuses a duplicate, also
 * between concurrent requests: 409), at most MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL per model, model, key and type fixed.
 */
@Injectable()
export class AttributeDefinitionsService {
  constructor(
    private readonly definitions: AttributeDefinitionsRepository,
    private readonly emitter: EventEmitter2,
    private readonly audit: AuditTrail,
  ) {}

  async list(companyId: CompanyId, model?: AttributeModel): Promise<AttributeDefinitionView[]> {
    const rows = await this.definitions.find(companyId, model ? { model } : {}, { sort: { model: 1, key: 1 } });
    return rows.map(AttributeDefinitionView.from);
  }

  async get(companyId: CompanyId, id: string): Promise<AttributeDefinitionView> {
    return AttributeDefinitionView.from(await this.existing(companyId, id));
  }

  /** The model's definitions by key (archived ones included): what values and filters are checked against. */
  async rulesOf(companyId: CompanyId, model: AttributeModel): Promise<ReadonlyMap<string, AttributeRule>> {
    return (await this.definitions.rules(companyId))[model];
  }

  /** rulesOf every model, from one (cached) read. */
  rulesByModel(companyId: CompanyId): Promise<RulesByModel> {
    return this.definitions.rules(companyId);
  }

  /** Checks an `attributes` patch of a record of `model` (400 naming each key that does not fit). */
  async checkPatch(companyId: CompanyId, model: AttributeModel, input: Record<string, unknown> | undefined): Promise<AttributePatch | null> {
    if (input === undefined || Object.keys(input).length === 0) return null;
    return checkAttributePatch(model, await this.rulesOf(companyId, model), input);
  }

  async create(companyId: CompanyId, dto: CreateAttributeDefinitionDto, origin: AuditOrigin): Promise<AttributeDefinitionView> {
    const record: Partial<AttributeDefinition> = {
      model: dto.model,
      key: dto.key,
      label: dto.label,
      type: dto.type,
      options: optionsFor(dto.type, dto.options),
      description: dto.description ?? null,
      archived: false,
    };
    const _id = new Types.ObjectId();
    const target = { type: 'attribute_definition', id: _id.toHexString() };
    const entry = stageAudit(origin, 'attribute_definition.created', target, changesMade(null, record));
    const created = await this.conflictOr(dto.model, dto.key, () =>
      insertWithinCap({
        cap: MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL,
        count: () => this.definitions.count(companyId, { model: dto.model }),
        insert: () => this.definitions.create(companyId, { _id, ...record, pendingAudit: [entry] } as Partial<AttributeDefinition>),
        undo: async (definition) => void (await this.definitions.deleteOne(companyId, { _id: definition._id })),
      }),
    );
    if (!created) {
      throw new BadRequestException(
        `A company can have at most ${MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL} ${dto.model} attributes; delete or reuse one first`,
      );
    }
    this.audit.written(companyId, this.definitions.collectionName, _id, [entry]);
    return AttributeDefinitionView.from(created);
  }

  /**
   * Defines `key` for contacts as `type` unless it is defined: the one-time migration of keys contacts held before
   * definitions existed. Past the cap too, so that nothing stored becomes unwritable.
   */
  async defineIfMissing(companyId: CompanyId, key: string, type: AttributeType): Promise<void> {
    await this.definitions.claimOne(
      companyId,
      { model: 'contact', key },
      { $setOnInsert: { label: key.slice(0, 100), type, options: [], description: null, archived: false } },
    );
  }

  async update(companyId: CompanyId, id: string, dto: UpdateAttributeDefinitionDto, origin: AuditOrigin): Promise<AttributeDefinitionView> {
    const existing = await this.existing(companyId, id);
    const set: Partial<AttributeDefinition> = {};
    if (dto.label !== undefined) set.label = dto.label;
    if (dto.options !== undefined) set.options = optionsFor(existing.type, dto.options);
    if (dto.description !== undefined) set.description = dto.description;
    if (dto.archived !== undefined) set.archived = dto.archived;
    if (Object.keys(set).length === 0) return AttributeDefinitionView.from(existing);
    const target = { type: 'attribute_definition', id: existing._id.toHexString() };
    const entry = stageAudit(origin, 'attribute_definition.updated', target, changesMade(existing, set));
    const updated = await this.definitions.updateOne(companyId, { _id: existing._id }, withAudit({ $set: set }, entry));
    if (!updated) throw this.notFound(id);
    this.audit.written(companyId, this.definitions.collectionName, existing._id, [entry]);
    return AttributeDefinitionView.from(updated);
  }

  /**
   * Archives the definition first (no new value from then on), removes its values from every record, then the
   * definition: a process that dies half-way leaves an archived definition, which a retried DELETE finishes.
   */
  async remove(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<DeletedAttributeDefinitionView> {
    const existing = await this.existing(companyId, id);
    await this.definitions.updateOne(companyId, { _id: existing._id }, { $set: { archived: true } });
    const removed: AttributeValuesRemoved = { companyId: toObjectId(String(companyId)), model: existing.model, key: existing.key };
    await this.emitter.emitAsync(ATTRIBUTE_VALUES_REMOVED, removed);
    // Two DELETEs at once both get here: only the one that removed it records the removal.
    const entry = stageAudit(origin, 'attribute_definition.deleted', { type: 'attribute_definition', id: existing._id.toHexString() });
    if (await this.definitions.removeAudited(companyId, { _id: existing._id }, entry)) {
      this.audit.written(companyId, this.definitions.collectionName, existing._id, [entry]);
    }
    return { id: existing._id.toHexString(), deleted: true };
  }

  private async existing(companyId: CompanyId, id: string): Promise<Stored<AttributeDefinition>> {
    const definition = await this.definitions.findById(companyId, id);
    if (!definition) throw this.notFound(id);
    return definition;
  }

  private notFound(id: string): NotFoundException {
    return new NotFoundException(`Attribute definition ${id} not found`);
  }

  private async conflictOr<T>(model: AttributeModel, key: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      throw new ConflictException(`A ${model} attribute with key "${key}" already exists in your company`);
    }
  }
}

/** A list takes options (1 or more); the other types none. */
function optionsFor(type: AttributeType, options: string[] | undefined): string[] {
  if (type === 'list' && !options?.length) {
    throw new RequestValidationException([{ field: 'options', message: 'options must list the values of a list attribute (1 to 200)' }]);
  }
  if (type !== 'list' && options !== undefined) {
    throw new RequestValidationException([{ field: 'options', message: `options are for list attributes only; this one is ${type}` }]);
  }
  return options ?? [];
}
