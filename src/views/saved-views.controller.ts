import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { PageMeta, type Page } from '../common/pagination/page.js';
import { ContactView } from '../contacts/contact.view.js';
import { AgentConversationView } from '../inbox/agent-conversation.view.js';
import { CreateSavedViewDto, UpdateSavedViewDto, ViewResultsQueryDto } from './dto/saved-view.dto.js';
import { MAX_COMPANY_VIEWS, MAX_PRIVATE_VIEWS_PER_AGENT } from './saved-view.schema.js';
import { DeletedSavedViewView, SavedViewListView, SavedViewView, ViewCountsView } from './saved-view.view.js';
import { COMPANY_VIEWS_NEED_ADMIN, MAX_EXACT_COUNT, SavedViewsService } from './saved-views.service.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

const WHO =
  "You see the company views and your own private ones (another agent's private view answers 404). Any agent creates, " +
  'changes and deletes its private views; company views are created, changed and deleted by admins (403 otherwise).';

@ApiTags('Views')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('views')
export class SavedViewsController {
  constructor(private readonly views: SavedViewsService) {}

  @Get()
  @ApiOperation({ summary: "List the views you see: the company's, then your private ones", description: WHO })
  @ApiOkResponse({ type: SavedViewListView })
  async list(@CurrentAgent() agent: AgentPrincipal): Promise<SavedViewListView> {
    return { data: await this.views.list(agent) };
  }

  @Get('counts')
  @ApiOperation({
    summary: 'How many records each view you see finds',
    description: `Exact up to ${MAX_EXACT_COUNT}; beyond, \`count\` is ${MAX_EXACT_COUNT} and \`capped\` true. A view whose filter uses a deleted attribute counts 0.`,
  })
  @ApiOkResponse({ type: ViewCountsView })
  async counts(@CurrentAgent() agent: AgentPrincipal): Promise<ViewCountsView> {
    return { data: await this.views.counts(agent) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get one view', description: WHO })
  @ApiOkResponse({ type: SavedViewView })
  @ApiProblemResponses(notFound('View'))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<SavedViewView> {
    return this.views.get(agent, id);
  }

  @Get(':id/results')
  @ApiOperation({
    summary: 'Run a view: one page of what it finds, in its sort',
    description:
      "As `POST /v1/conversations/search` or `POST /v1/contacts/search` with the view's filter and sort; pass `nextCursor` back as `cursor`.",
  })
  @ApiExtraModels(PageMeta, AgentConversationView, ContactView)
  @ApiOkResponse({
    schema: {
      allOf: [
        { $ref: getSchemaPath(PageMeta) },
        {
          properties: {
            data: { type: 'array', items: { oneOf: [{ $ref: getSchemaPath(AgentConversationView) }, { $ref: getSchemaPath(ContactView) }] } },
          },
          required: ['data'],
        },
      ],
    },
  })
  @ApiProblemResponses(notFound('View'))
  results(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Query() query: ViewResultsQueryDto,
  ): Promise<Page<AgentConversationView | ContactView>> {
    return this.views.results(agent, id, query);
  }

  @Post()
  @ApiOperation({
    summary: 'Save a view',
    description: `${WHO} At most ${MAX_PRIVATE_VIEWS_PER_AGENT} private views per agent and ${MAX_COMPANY_VIEWS} company views (400 past that). The filter is checked as a search checks it (400 naming its place).`,
  })
  @ApiCreatedResponse({ type: SavedViewView })
  @ApiProblemResponses([403, COMPANY_VIEWS_NEED_ADMIN])
  create(@CurrentAgent() agent: AgentPrincipal, @Body() dto: CreateSavedViewDto, @AuditOriginOf() origin: AuditOrigin): Promise<SavedViewView> {
    return this.views.create(agent, dto, origin);
  }

  @Patch(':id')
  @ApiOperation({ summary: "Change a view's name, filter or sort", description: `${WHO} \`model\` and \`visibility\` never change (400).` })
  @ApiOkResponse({ type: SavedViewView })
  @ApiProblemResponses([403, COMPANY_VIEWS_NEED_ADMIN], notFound('View'))
  update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateSavedViewDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<SavedViewView> {
    return this.views.update(agent, id, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({ summary: 'Delete a view', description: WHO })
  @ApiOkResponse({ type: DeletedSavedViewView })
  @ApiProblemResponses([403, COMPANY_VIEWS_NEED_ADMIN], notFound('View'))
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<DeletedSavedViewView> {
    return this.views.remove(agent, id, origin);
  }
}
