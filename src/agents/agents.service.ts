import { BadRequestException, ConflictException, ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import { Types, type QueryFilter, type UpdateQuery } from 'mongoose';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { AutoAssignmentConsumer } from '../assignment/auto-assignment.consumer.js';
import { diff, stageAudit, type AuditOrigin, type StagedAuditEntry } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { roleAllows } from '../auth/guards/permissions.guard.js';
import { PasswordHasher } from '../auth/password-hasher.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { duplicateKeyField, isDuplicateKeyError } from '../database/mongo-errors.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { Agent } from './agent.schema.js';
import { AgentView } from './agent.view.js';
import { AgentsRepository } from './agents.repository.js';
import type { CreateAgentDto } from './dto/create-agent.dto.js';
import type { ListAgentsQueryDto } from './dto/list-agents-query.dto.js';
import type { UpdateAgentDto } from './dto/update-agent.dto.js';
import { TeamsRepository } from '../teams/teams.repository.js';

const CAN_LOG_IN_ELSEWHERE = 'An agent with this e-mail can already log in';
const LAST_ADMIN = 'The company must keep at least one active admin';
/** What an agent's audit entries show changing; the password only as "[changed]". */
const AUDITED_FIELDS = ['name', 'email', 'role', 'status', 'isActive', 'password'] as const;

@Injectable()
export class AgentsService {
  constructor(
    private readonly agents: AgentsRepository,
    private readonly passwords: PasswordHasher,
    private readonly conversations: ConversationsService,
    private readonly autoAssignment: AutoAssignmentConsumer,
    private readonly apiKeys: ApiKeysService,
    private readonly teams: TeamsRepository,
    private readonly audit: AuditTrail,
  ) {}

  async list(companyId: CompanyId, query: ListAgentsQueryDto): Promise<Page<AgentView>> {
    const filter: QueryFilter<Agent> = {};
    if (query.status) filter.status = query.status;
    if (query.isActive !== undefined) filter.isActive = query.isActive;
    return mapPage(await this.agents.page(companyId, filter, { limit: query.limit, cursor: query.cursor }), AgentView.from);
  }

  /** With the teams it is a member of (`teamIds`). */
  async get(companyId: CompanyId, id: string): Promise<AgentView> {
    const agent = await this.findStored(companyId, id);
    return { ...AgentView.from(agent), teamIds: await this.teams.idsOfMember(companyId, agent._id) };
  }

  /** 409 for an e-mail already used in the company, or, with a password, one that can log in anywhere. */
  async create(companyId: CompanyId, dto: CreateAgentDto, origin: AuditOrigin): Promise<AgentView> {
    const email = dto.email.trim().toLowerCase();
    if (await this.agents.findOne(companyId, { email }, { _id: 1 })) {
      throw new ConflictException(`An agent with e-mail ${email} already exists in this company`);
    }
    if (dto.password !== undefined && (await this.agents.isLoginEmailTaken(email))) {
      throw new ConflictException(CAN_LOG_IN_ELSEWHERE);
    }
    const record = { name: dto.name, email, role: dto.role ?? 'agent', status: dto.status ?? 'offline', isActive: true } as const;
    const _id = new Types.ObjectId();
    const entry = stageAudit(
      origin,
      'agent.created',
      { type: 'agent', id: _id.toHexString() },
      diff(null, { ...record, password: dto.password }, AUDITED_FIELDS, { secret: ['password'] }),
    );
    const created = await this.agents
      .create(companyId, {
        _id,
        ...record,
        passwordHash: dto.password === undefined ? undefined : await this.passwords.hash(dto.password),
        pendingAudit: [entry],
      } as Partial<Agent>)
      .catch((error: unknown) => this.rethrowDuplicate(error, email));
    this.audit.written(companyId, this.agents.collectionName, _id, [entry]);
    if (created.status === 'online') await this.autoAssignment.nudge(companyId);
    return AgentView.from(created);
  }

  /**
   * Admins change anything; anyone else only their own status (403 otherwise). Deactivating here
   * (`isActive: false`) is the same as DELETE. An admin given another role loses the API keys it created.
   */
  async update(actor: AgentPrincipal, id: string, dto: UpdateAgentDto, origin: AuditOrigin): Promise<AgentView> {
    const { companyId } = actor;
    const current = await this.findStored(companyId, id);
    this.authorize(actor, current, dto);

    const { password, isActive, status, ...fields } = dto;
    const staysInactive = !current.isActive && isActive !== true;
    if (staysInactive && status !== undefined && status !== 'offline') {
      throw new BadRequestException(`Agent ${id} is deactivated and stays offline; reactivate it with isActive: true`);
    }
    const set: UpdateQuery<Agent> = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
    if (isActive === true) set.isActive = true;
    if (password !== undefined) {
      const loginHolder = await this.agents.findLoginCandidate(current.email);
      if (loginHolder && !loginHolder._id.equals(current._id)) throw new ConflictException(CAN_LOG_IN_ELSEWHERE);
      set.passwordHash = await this.passwords.hash(password);
    }
    const demotesAdmin = current.role === 'admin' && current.isActive && fields.role !== undefined && fields.role !== 'admin';
    if (demotesAdmin && (await this.agents.countActiveAdmins(companyId)) <= 1) throw new ConflictException(LAST_ADMIN);

    // A new password, role or activation ends the agent's earlier tokens (see Agent.tokenVersion).
    const endsSessions =
      password !== undefined || (fields.role !== undefined && fields.role !== current.role) || (isActive === true && !current.isActive);
    let updated = current;
    if (Object.keys(set).length > 0) {
      const entry = this.auditedUpdate(actor, current, { ...current, ...set, password: password === undefined ? undefined : '' }, origin);
      const update: UpdateQuery<Agent> = { $set: set, ...(endsSessions ? { $inc: { tokenVersion: 1 } } : {}) };
      updated =
        (await this.agents
          .updateOne(companyId, { _id: current._id }, entry ? withAudit(update, entry) : update)
          .catch((error: unknown) => this.rethrowDuplicate(error, current.email))) ?? this.notFound(id);
      if (demotesAdmin) {
        await this.keepAnAdmin(companyId, current, entry);
        await this.apiKeys.revokeCreatedBy(companyId, current._id, 'creator_demoted');
      }
      if (entry) this.audit.written(companyId, this.agents.collectionName, current._id, [entry]);
    }
    if (isActive === false) return this.deactivateStored(companyId, updated, origin);
    if (status !== undefined && status !== updated.status) {
      const reason = actor.agentId === id ? 'agent' : 'admin';
      // A status set by someone else is an administrative change; an agent's own is not.
      const entry = reason === 'admin' ? stageAudit(origin, 'agent.updated', { type: 'agent', id }, { status: [updated.status, status] }) : undefined;
      updated = (await this.agents.changeStatus(companyId, updated, status, reason, entry)) ?? this.statusMoved(id);
      if (entry) this.audit.written(companyId, this.agents.collectionName, updated._id, [entry]);
    }
    const cameOnline = updated.isActive && updated.status === 'online' && !(current.isActive && current.status === 'online');
    // More capacity or new skills may let it take a waiting conversation.
    const routingChanged = fields.capacity !== undefined || fields.capacityByChannel !== undefined || fields.skills !== undefined;
    if (cameOnline || routingChanged) await this.autoAssignment.nudge(companyId);
    return AgentView.from(updated);
  }

  /**
   * Deactivates: `isActive: false`, offline, its open `human` conversations back to the queue (and
   * auto-assigned again when that is on). Its tokens stop working on their next request, and the API keys
   * it created are revoked (they do not outlive the admin who made them); the record stays. Deactivating
   * twice answers the agent as it is; the last active admin cannot go (409).
   */
  async deactivate(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<AgentView> {
    return this.deactivateStored(companyId, await this.findStored(companyId, id), origin);
  }

  private async deactivateStored(companyId: CompanyId, current: Stored<Agent>, origin: AuditOrigin): Promise<AgentView> {
    const id = current._id.toHexString();
    const entry = stageAudit(
      origin,
      'agent.deactivated',
      { type: 'agent', id },
      diff(current, { ...current, isActive: false, status: 'offline' }, AUDITED_FIELDS),
    );
    // Of two concurrent deactivations only one moves the conversations; the other answers the agent.
    if (!(await this.agents.deactivate(companyId, current, entry))) return this.get(companyId, id);
    if (current.role === 'admin') await this.keepAnAdmin(companyId, current, entry);
    this.audit.written(companyId, this.agents.collectionName, current._id, [entry]);
    await this.apiKeys.revokeCreatedBy(companyId, current._id, 'creator_deactivated');
    // Each re-queued conversation notifies `conversation.queued`, which auto-assignment serves.
    await this.conversations.requeueAgentConversations(companyId, id);
    return this.get(companyId, id);
  }

  private authorize(actor: AgentPrincipal, target: Stored<Agent>, dto: UpdateAgentDto): void {
    if (roleAllows(actor.role, 'admin')) return;
    if (actor.agentId !== target._id.toHexString()) throw new ForbiddenException('Only admins may change other agents');
    const others = Object.entries(dto)
      .filter(([field, value]) => field !== 'status' && value !== undefined)
      .map(([field]) => field);
    if (others.length > 0) {
      throw new ForbiddenException(`Agents may change only their own status; ${others.join(', ')} need an admin`);
    }
  }

  /**
   * Checked after the write too: two admins demoting or deactivating each other at once both see the
   * other still active beforehand, but afterwards at least one of them sees none, and undoes its change.
   */
  private async keepAnAdmin(companyId: CompanyId, previous: Stored<Agent>, entry: StagedAuditEntry | null): Promise<void> {
    if ((await this.agents.countActiveAdmins(companyId)) > 0) return;
    await this.agents.updateOne(
      companyId,
      { _id: previous._id },
      // Undone, so the sessions it ended come back: the version it had before (and no entry records it).
      {
        $set: { role: previous.role, isActive: previous.isActive, status: previous.status, tokenVersion: previous.tokenVersion ?? 0 },
        ...(entry ? { $pull: { pendingAudit: { id: entry.id } } } : {}),
      },
    );
    throw new ConflictException(LAST_ADMIN);
  }

  private statusMoved(id: string): never {
    throw new ConflictException(`Agent ${id} was changed by another request; read it again and retry`);
  }

  /**
   * The entry of an update, or null when it needs none: an agent setting its own status is not an administrative
   * change (a status set by someone else is).
   */
  private auditedUpdate(actor: AgentPrincipal, current: Stored<Agent>, after: Record<string, unknown>, origin: AuditOrigin): StagedAuditEntry | null {
    const changes = diff({ ...current, password: undefined }, after, AUDITED_FIELDS, { secret: ['password'] });
    if ('password' in changes) changes.password = ['[changed]', '[changed]'];
    const own = actor.agentId === current._id.toHexString() && Object.keys(changes).every((field) => field === 'status');
    if (Object.keys(changes).length === 0 || own) return null;
    return stageAudit(origin, 'agent.updated', { type: 'agent', id: current._id.toHexString() }, changes);
  }

  private rethrowDuplicate(error: unknown, email: string): never {
    if (!isDuplicateKeyError(error)) throw error;
    // The company-scoped unique index names companyId first; the login index is on e-mail alone.
    if (duplicateKeyField(error) === 'email' && Object.keys(error.keyPattern ?? {}).includes('companyId')) {
      throw new ConflictException(`An agent with e-mail ${email} already exists in this company`);
    }
    throw new ConflictException(CAN_LOG_IN_ELSEWHERE);
  }

  private async findStored(companyId: CompanyId, id: string): Promise<Stored<Agent>> {
    return (await this.agents.findById(companyId, id)) ?? this.notFound(id);
  }

  private notFound(id: string): never {
    throw new NotFoundException(`Agent ${id} not found`);
  }
}
