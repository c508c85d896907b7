import { BadRequestException, ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { AgentsRepository } from '../agents/agents.repository.js';
import { AUTO_ASSIGNMENT } from '../assignment/auto-assignment.name.js';
import { RequestValidationException, type FieldProblem } from '../common/errors/request-validation.exception.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import type { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { parseObjectId, toObjectId } from '../database/object-id.js';
import { insertWithinCap } from '../database/tenancy/insert-within-cap.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { EventConsumers } from '../events/consumers/event-consumers.js';
import type { CreateTeamDto, TeamOptionsDto, UpdateTeamDto } from './dto/team.dto.js';
import { MAX_TEAMS_PER_COMPANY, type Team, type TeamOverflow } from './team.schema.js';
import { DeletedTeamView, TeamView } from './team.view.js';
import { TeamsRepository } from './teams.repository.js';
import { changesMade, stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import { Types } from 'mongoose';

/**
 * Teams (contract section 19): who is in them, how their queue is served, and what happens after the longest wait.
 * Every check is made before anything is stored, so a refused body leaves nothing behind; a change that can give
 * an agent work (members, strategy, activation) nudges routing.
 */
@Injectable()
export class TeamsService {
  constructor(
    private readonly teams: TeamsRepository,
    private readonly agents: AgentsRepository,
    private readonly conversations: ConversationsRepository,
    private readonly consumers: EventConsumers,
    private readonly audit: AuditTrail,
  ) {}

  async list(companyId: CompanyId, query: PageQueryDto): Promise<Page<TeamView>> {
    return mapPage(await this.teams.page(companyId, {}, { limit: query.limit, cursor: query.cursor }), TeamView.from);
  }

  async get(companyId: CompanyId, id: string): Promise<TeamView> {
    return TeamView.from(await this.stored(companyId, id));
  }

  /** 409 for a name taken in the company; 400 past MAX_TEAMS_PER_COMPANY, which holds under concurrent creates. */
  async create(companyId: CompanyId, dto: CreateTeamDto, origin: AuditOrigin): Promise<TeamView> {
    const fields = await this.checked(companyId, dto, null);
    const record: Partial<Team> = {
      memberIds: [],
      strategy: 'round_robin',
      maxWaitSeconds: null,
      overflow: null,
      isActive: true,
      ...fields,
      name: dto.name,
    };
    const _id = new Types.ObjectId();
    const entry = stageAudit(origin, 'team.created', { type: 'team', id: _id.toHexString() }, changesMade(null, record));
    let created: Stored<Team> | null;
    try {
      created = await insertWithinCap({
        cap: MAX_TEAMS_PER_COMPANY,
        count: () => this.teams.count(companyId),
        insert: () => this.teams.create(companyId, { _id, ...record, pendingAudit: [entry] } as Partial<Team>),
        undo: async (team) => void (await this.teams.deleteOne(companyId, { _id: team._id })),
      });
    } catch (error) {
      throw this.duplicateName(error, dto.name);
    }
    if (!created) throw new BadRequestException(`A company can have at most ${MAX_TEAMS_PER_COMPANY} teams`);
    this.audit.written(companyId, this.teams.collectionName, _id, [entry]);
    await this.nudgeRouting(companyId);
    return TeamView.from(created);
  }

  async update(companyId: CompanyId, id: string, dto: UpdateTeamDto, origin: AuditOrigin): Promise<TeamView> {
    const current = await this.stored(companyId, id);
    const set: Partial<Team> = await this.checked(companyId, dto, current);
    if (dto.name !== undefined) set.name = dto.name;
    if (Object.keys(set).length === 0) return TeamView.from(current);
    const entry = stageAudit(origin, 'team.updated', { type: 'team', id: current._id.toHexString() }, changesMade(current, set));
    const updated = await this.teams.updateOne(companyId, { _id: current._id }, withAudit({ $set: set }, entry)).catch((error: unknown) => {
      throw this.duplicateName(error, dto.name ?? current.name);
    });
    if (!updated) throw this.notFound(id);
    this.audit.written(companyId, this.teams.collectionName, current._id, [entry]);
    await this.nudgeRouting(companyId);
    return TeamView.from(updated);
  }

  /** Its waiting conversations go to the company queue (`teamId: null`); overflows into it are cleared. */
  async remove(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<DeletedTeamView> {
    const _id = parseObjectId(id);
    if (!_id) throw this.notFound(id);
    const entry = stageAudit(origin, 'team.deleted', { type: 'team', id: _id.toHexString() });
    if (!(await this.teams.removeAudited(companyId, { _id }, entry))) throw this.notFound(id);
    this.audit.written(companyId, this.teams.collectionName, _id, [entry]);
    await this.teams.updateMany(companyId, { 'overflow.teamId': _id }, { $set: { overflow: null } });
    await this.conversations.updateMany(companyId, { teamId: _id, isOpen: true }, { $set: { teamId: null }, $inc: { revision: 1 } });
    await this.nudgeRouting(companyId);
    return { id: _id.toHexString(), deleted: true };
  }

  /**
   * The stored form of the body's fields, after every check: members active agents of the company, an overflow
   * `team` naming another existing team, and an overflow `message` with its text. 400 naming the field otherwise.
   */
  private async checked(companyId: CompanyId, dto: TeamOptionsDto, current: Stored<Team> | null): Promise<Partial<Team>> {
    const problems: FieldProblem[] = [];
    const set: Partial<Team> = {};
    if (dto.memberIds !== undefined) {
      const ids = [...new Set(dto.memberIds)];
      const found = await this.agents.findPlain(
        companyId,
        { _id: { $in: ids.map(toObjectId) }, isActive: true },
        { projection: { _id: 1 }, limit: ids.length },
      );
      const active = new Set(found.map((agent) => agent._id.toHexString()));
      const refused = ids.filter((memberId) => !active.has(memberId));
      if (refused.length > 0)
        problems.push({ field: 'memberIds', message: `memberIds must be active agents of your company (not ${refused.slice(0, 5).join(', ')})` });
      set.memberIds = ids.map(toObjectId);
    }
    if (dto.strategy !== undefined) set.strategy = dto.strategy;
    if (dto.maxWaitSeconds !== undefined) set.maxWaitSeconds = dto.maxWaitSeconds;
    if (dto.isActive !== undefined) set.isActive = dto.isActive;
    if (dto.overflow !== undefined) {
      const overflow = dto.overflow;
      if (overflow === null) set.overflow = null;
      else {
        let teamId = null;
        if (overflow.action === 'team') {
          teamId = toObjectId(overflow.teamId!);
          if (current?._id.equals(teamId)) problems.push({ field: 'overflow.teamId', message: 'overflow.teamId must be another team' });
          else if (!(await this.teams.findById(companyId, overflow.teamId!, { _id: 1 }))) {
            problems.push({ field: 'overflow.teamId', message: 'overflow.teamId must be a team of your company' });
          }
        }
        const stored: TeamOverflow = { action: overflow.action, teamId, text: overflow.action === 'message' ? overflow.text! : null };
        set.overflow = stored;
      }
    }
    if (problems.length > 0) throw new RequestValidationException(problems);
    return set;
  }

  private async nudgeRouting(companyId: CompanyId): Promise<void> {
    await this.consumers.nudge(AUTO_ASSIGNMENT, String(companyId));
  }

  private duplicateName(error: unknown, name: string): unknown {
    return isDuplicateKeyError(error) ? new ConflictException(`A team named ${name} already exists in your company`) : error;
  }

  private async stored(companyId: CompanyId, id: string): Promise<Stored<Team>> {
    return (await this.teams.findById(companyId, id)) ?? this.notFound(id);
  }

  private notFound(id: string): never {
    throw new NotFoundException(`Team ${id} not found`);
  }
}
