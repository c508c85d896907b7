import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { MAX_CANNED_RESPONSES_PER_COMPANY } from './canned-response.schema.js';
import { CannedResponseView, DeletedCannedResponseView } from './canned-response.view.js';
import { CannedResponsesService } from './canned-responses.service.js';
import { CreateCannedResponseDto } from './dto/create-canned-response.dto.js';
import { ListCannedResponsesQueryDto } from './dto/list-canned-responses-query.dto.js';
import { UpdateCannedResponseDto } from './dto/update-canned-response.dto.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

const SENDING =
  'Send one with POST /conversations/{id}/messages `{ cannedResponseId }`: its placeholders are filled in for that ' +
  'conversation (its contact, you, your company; a missing value renders as empty) and it goes out as your text message.';

@ApiTags('Canned responses')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('canned-responses')
export class CannedResponsesController {
  constructor(private readonly responses: CannedResponsesService) {}

  @Get()
  @ApiOperation({
    summary: 'List canned responses by shortCode, optionally searched',
    description:
      '`search` keeps those whose shortCode starts with it or whose title or content contain it (case-insensitive). ' +
      `Pass \`nextCursor\` back as \`cursor\`. ${SENDING}`,
  })
  @ApiPageResponse(CannedResponseView, 'One page, by shortCode')
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListCannedResponsesQueryDto): Promise<Page<CannedResponseView>> {
    return this.responses.list(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get one canned response', description: "A missing, malformed or other company's id answers 404." })
  @ApiOkResponse({ type: CannedResponseView })
  @ApiProblemResponses(notFound('Canned response'))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<CannedResponseView> {
    return this.responses.get(agent.companyId, id);
  }

  @Post()
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Create a canned response (supervisor or admin)',
    description:
      'Placeholders are checked now: an unknown one answers 400 naming `content`. A shortCode your company already ' +
      `uses answers 409. At most ${MAX_CANNED_RESPONSES_PER_COMPANY} per company (400 past that). ${SENDING}`,
  })
  @ApiCreatedResponse({ type: CannedResponseView })
  @ApiProblemResponses(403, 409)
  create(
    @CurrentAgent() agent: AgentPrincipal,
    @Body() dto: CreateCannedResponseDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<CannedResponseView> {
    return this.responses.create(agent.companyId, dto, origin);
  }

  @Patch(':id')
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Update a canned response (supervisor or admin)',
    description: 'Only the fields sent change. Placeholders are checked as on create; a shortCode in use answers 409.',
  })
  @ApiOkResponse({ type: CannedResponseView })
  @ApiProblemResponses(403, notFound('Canned response'), 409)
  update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateCannedResponseDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<CannedResponseView> {
    return this.responses.update(agent.companyId, id, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('supervisor')
  @ApiOperation({ summary: 'Delete a canned response (supervisor or admin)', description: 'Messages already sent with it stay as they are.' })
  @ApiOkResponse({ type: DeletedCannedResponseView })
  @ApiProblemResponses(403, notFound('Canned response'))
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<DeletedCannedResponseView> {
    return this.responses.remove(agent.companyId, id, origin);
  }
}
