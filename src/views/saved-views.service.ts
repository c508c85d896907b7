import { BadRequestException, ForbiddenException, Injectable, NotFoundException } from '@nestjs/common';
import type { QueryFilter } from 'mongoose';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { roleRequiredMessage } from '../auth/decorators/require-role.decorator.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { Page } from '../common/pagination/page.js';
import type { ContactView } from '../contacts/contact.view.js';
import { CONTACT_SORTS, ContactQueries, type ContactSort } from '../contacts/contact-queries.js';
import { CONVERSATION_SORTS, type ConversationSort } from '../conversations/conversation-order.js';
import { ConversationLists } from '../conversations/conversation-lists.js';
import { parseObjectId, toObjectId } from '../database/object-id.js';
import { insertWithinCap } from '../database/tenancy/insert-within-cap.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { parseFilter, type FilterModel } from '../filters/index.js';
import type { AgentConversationView } from '../inbox/agent-conversation.view.js';
import { FilterCompiler } from '../search/filter-compiler.js';
import { SearchService } from '../search/search.service.js';
import type { CreateSavedViewDto, UpdateSavedViewDto, ViewResultsQueryDto } from './dto/saved-view.dto.js';
import { MAX_COMPANY_VIEWS, MAX_PRIVATE_VIEWS_PER_AGENT, type SavedView } from './saved-view.schema.js';
import { DeletedSavedViewView, SavedViewView, type ViewCountView } from './saved-view.view.js';
import { SavedViewsRepository } from './saved-views.repository.js';
import { diff, stageAudit, type AuditChanges, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import { Types } from 'mongoose';

/** Counts are exact up to this many (contract section 20); beyond, `capped`. */
export const MAX_EXACT_COUNT = 10_000;

const SORTS: Record<FilterModel, readonly string[]> = { conversation: CONVERSATION_SORTS, contact: CONTACT_SORTS };

/**
 * Saved views (contract section 20): an agent sees the company's views and its own private ones (any other is a 404);
 * it creates, changes and deletes its private views, admins the company's.
 */
/** The 403 of a company view created, changed or deleted by a supervisor or an agent. */
export const COMPANY_VIEWS_NEED_ADMIN = `${roleRequiredMessage('admin')}: company views are the admins'`;

@Injectable()
export class SavedViewsService {
  constructor(
    private readonly views: SavedViewsRepository,
    private readonly filters: FilterCompiler,
    private readonly search: SearchService,
    private readonly lists: ConversationLists,
    private readonly contacts: ContactQueries,
    private readonly audit: AuditTrail,
  ) {}

  async list(agent: AgentPrincipal): Promise<SavedViewView[]> {
    return (await this.visible(agent)).map(SavedViewView.from);
  }

  async get(agent: AgentPrincipal, id: string): Promise<SavedViewView> {
    return SavedViewView.from(await this.existing(agent, id));
  }

  async create(agent: AgentPrincipal, dto: CreateSavedViewDto, origin: AuditOrigin): Promise<SavedViewView> {
    if (dto.visibility === 'company') this.assertAdmin(agent);
    const sort = sortFor(dto.model, dto.sort);
    await this.filters.parse(agent.companyId, dto.model, dto.filter);
    const me = toObjectId(agent.agentId);
    const counted: QueryFilter<SavedView> = dto.visibility === 'company' ? { visibility: 'company' } : { visibility: 'private', ownerId: me };
    const cap = dto.visibility === 'company' ? MAX_COMPANY_VIEWS : MAX_PRIVATE_VIEWS_PER_AGENT;
    const record: Partial<SavedView> = { name: dto.name, model: dto.model, filter: dto.filter, sort, visibility: dto.visibility, ownerId: me };
    const _id = new Types.ObjectId();
    const entry = audited(record) ? stageAudit(origin, 'view.created', { type: 'view', id: _id.toHexString() }, viewChanges(null, record)) : null;
    const created = await insertWithinCap({
      cap,
      count: () => this.views.countPlain(agent.companyId, counted),
      insert: () => this.views.create(agent.companyId, { _id, ...record, ...(entry && { pendingAudit: [entry] }) } as Partial<SavedView>),
      undo: async (view) => void (await this.views.deleteOne(agent.companyId, { _id: view._id })),
    });
    if (!created) {
      throw new BadRequestException(
        dto.visibility === 'company'
          ? `A company can have at most ${MAX_COMPANY_VIEWS} company views`
          : `An agent can have at most ${MAX_PRIVATE_VIEWS_PER_AGENT} private views`,
      );
    }
    if (entry) this.audit.written(agent.companyId, this.views.collectionName, _id, [entry]);
    return SavedViewView.from(created);
  }

  async update(agent: AgentPrincipal, id: string, dto: UpdateSavedViewDto, origin: AuditOrigin): Promise<SavedViewView> {
    const view = await this.writable(agent, id);
    const set: Partial<SavedView> = {};
    if (dto.name !== undefined) set.name = dto.name;
    if (dto.sort !== undefined) set.sort = sortFor(view.model, dto.sort);
    if (dto.filter !== undefined) {
      await this.filters.parse(agent.companyId, view.model, dto.filter);
      set.filter = dto.filter;
    }
    if (Object.keys(set).length === 0) return SavedViewView.from(view);
    const entry = audited(view)
      ? stageAudit(origin, 'view.updated', { type: 'view', id: view._id.toHexString() }, viewChanges(view, set, Object.keys(set)))
      : null;
    const updated = await this.views.updateOne(agent.companyId, { _id: view._id }, entry ? withAudit({ $set: set }, entry) : { $set: set });
    if (!updated) throw notFound(id);
    if (entry) this.audit.written(agent.companyId, this.views.collectionName, view._id, [entry]);
    return SavedViewView.from(updated);
  }

  async remove(agent: AgentPrincipal, id: string, origin: AuditOrigin): Promise<DeletedSavedViewView> {
    const view = await this.writable(agent, id);
    if (!audited(view)) {
      if (!(await this.views.deleteOne(agent.companyId, { _id: view._id }))) throw notFound(id);
    } else {
      const entry = stageAudit(origin, 'view.deleted', { type: 'view', id: view._id.toHexString() });
      if (!(await this.views.removeAudited(agent.companyId, { _id: view._id }, entry))) throw notFound(id);
      this.audit.written(agent.companyId, this.views.collectionName, view._id, [entry]);
    }
    return { id: view._id.toHexString(), deleted: true };
  }

  /** One page of what the view finds, as the searches answer it. */
  async results(agent: AgentPrincipal, id: string, query: ViewResultsQueryDto): Promise<Page<AgentConversationView | ContactView>> {
    const view = await this.existing(agent, id, true);
    const request = { filter: view.filter, limit: query.limit, cursor: query.cursor };
    return view.model === 'conversation'
      ? this.search.conversations(agent, { ...request, sort: view.sort as ConversationSort })
      : this.search.contacts(agent, { ...request, sort: view.sort as ContactSort });
  }

  /**
   * How many records each view the agent sees finds, exact up to MAX_EXACT_COUNT: each one `count` that stops past
   * it. A view whose filter no longer holds (a definition it uses was deleted) counts 0. The definitions are read once
   * for all the views.
   */
  async counts(agent: AgentPrincipal): Promise<ViewCountView[]> {
    const views = await this.visible(agent);
    if (views.length === 0) return [];
    const schemas = await this.filters.schemasOf(agent.companyId);
    return Promise.all(
      views.map(async (view) => {
        let count: number;
        try {
          const query = await this.filters.query(agent.companyId, parseFilter(schemas[view.model], view.filter));
          count =
            view.model === 'conversation'
              ? await this.lists.countUpTo(agent.companyId, query, MAX_EXACT_COUNT + 1)
              : await this.contacts.countUpTo(agent.companyId, query, MAX_EXACT_COUNT + 1);
        } catch (error) {
          if (!(error instanceof RequestValidationException)) throw error;
          count = 0;
        }
        return { viewId: view._id.toHexString(), count: Math.min(count, MAX_EXACT_COUNT), capped: count > MAX_EXACT_COUNT };
      }),
    );
  }

  private async visible(agent: AgentPrincipal): Promise<Stored<SavedView>[]> {
    const me = toObjectId(agent.agentId);
    const [company, mine] = await Promise.all([
      this.views.findPlain(agent.companyId, { visibility: 'company' }, { sort: { _id: 1 } }),
      this.views.findPlain(agent.companyId, { visibility: 'private', ownerId: me }, { sort: { _id: 1 } }),
    ]);
    return [...company, ...mine];
  }

  /** A view the agent sees; another agent's private view is a 404, like a missing one. */
  private async existing(agent: AgentPrincipal, id: string, forPages = false): Promise<Stored<SavedView>> {
    const _id = parseObjectId(id);
    // A page of the view reads it from memory; a change, or the view itself, reads what is stored.
    const view = !_id ? null : forPages ? await this.views.forPages(agent.companyId, _id) : await this.views.findOnePlain(agent.companyId, { _id });
    if (!view || (view.visibility === 'private' && !view.ownerId.equals(agent.agentId))) throw notFound(id);
    return view;
  }

  /** A view the agent may change: its own private one, or a company one for an admin (403 otherwise). */
  private async writable(agent: AgentPrincipal, id: string): Promise<Stored<SavedView>> {
    const view = await this.existing(agent, id);
    if (view.visibility === 'company') this.assertAdmin(agent);
    return view;
  }

  private assertAdmin(agent: AgentPrincipal): void {
    if (agent.role !== 'admin') throw new ForbiddenException(COMPANY_VIEWS_NEED_ADMIN);
  }
}

/** Company views are the company's configuration (contract section 23); a private view is its owner's own business. */
function audited(view: Partial<SavedView>): boolean {
  return view.visibility === 'company';
}

const VIEW_FIELDS = ['name', 'model', 'filter', 'sort', 'visibility', 'ownerId'];

/** A filter may compare with a contact's e-mail or phone: it is named, never shown (the log holds no personal data). */
function viewChanges(before: Partial<SavedView> | null, after: Partial<SavedView>, fields = VIEW_FIELDS): AuditChanges {
  return diff(before, after, fields, { namesOnly: ['filter'] });
}

function notFound(id: string): NotFoundException {
  return new NotFoundException(`View ${id} not found`);
}

function sortFor(model: FilterModel, sort: string | undefined): string {
  if (sort === undefined) return 'created';
  if (!SORTS[model].includes(sort)) {
    throw new RequestValidationException([{ field: 'sort', message: `sort must be one of ${SORTS[model].join(', ')} for ${model} views` }]);
  }
  return sort;
}
