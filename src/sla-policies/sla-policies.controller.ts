import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { ListSlaPoliciesQueryDto } from './dto/list-sla-policies-query.dto.js';
import { CreateSlaPolicyDto, UpdateSlaPolicyDto } from './dto/write-sla-policy.dto.js';
import { SlaPoliciesService } from './sla-policies.service.js';
import { DeletedSlaPolicyView, SlaPolicyView } from './sla-policy.view.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

const MATCHING =
  'A conversation takes the first active policy (oldest first) whose conditions match when it opens, and again when ' +
  'its priority changes; it keeps a copy of the targets it took, so a change here applies to conversations matched ' +
  'after it. Conversations show the deadlines in `sla`, and `sla.warning` / `sla.breached` fire at them ' +
  '(docs/service-levels.md).';

@ApiTags('SLA policies')
@ApiBearerAuth()
@ApiProblemResponses(401, 429)
@Controller('sla-policies')
export class SlaPoliciesController {
  constructor(private readonly policies: SlaPoliciesService) {}

  @Get()
  @ApiOperation({ summary: 'List SLA policies, newest first', description: `Any agent. Pass \`nextCursor\` back as \`cursor\`. ${MATCHING}` })
  @ApiPageResponse(SlaPolicyView)
  @ApiProblemResponses(400)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListSlaPoliciesQueryDto): Promise<Page<SlaPolicyView>> {
    return this.policies.list(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One SLA policy', description: "Any agent. A missing, malformed or other company's id answers 404." })
  @ApiOkResponse({ type: SlaPolicyView })
  @ApiProblemResponses(notFound('SLA policy'))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<SlaPolicyView> {
    return this.policies.get(agent.companyId, id);
  }

  @Post()
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Create an SLA policy (supervisor)',
    description:
      'At least one target of firstResponseSeconds, nextResponseSeconds and resolutionSeconds (else 400 naming them); ' +
      'warnBeforeSeconds shorter than each target. At most 100 policies per company. ' +
      MATCHING,
  })
  @ApiCreatedResponse({ type: SlaPolicyView })
  @ApiProblemResponses(400, 403)
  create(@CurrentAgent() agent: AgentPrincipal, @Body() dto: CreateSlaPolicyDto, @AuditOriginOf() origin: AuditOrigin): Promise<SlaPolicyView> {
    return this.policies.create(agent.companyId, dto, origin);
  }

  @Patch(':id')
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Change an SLA policy (supervisor)',
    description:
      'Only the fields sent change (`conditions.priorities` and `conditions.channels` each replaced whole; null clears a ' +
      'target or the warning); the result must still have a target and a warning shorter than each (400).',
  })
  @ApiOkResponse({ type: SlaPolicyView })
  @ApiProblemResponses(400, 403, notFound('SLA policy'))
  update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateSlaPolicyDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<SlaPolicyView> {
    return this.policies.update(agent.companyId, id, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Delete an SLA policy (supervisor)',
    description: 'It matches no conversation from now on; conversations that took it keep their deadlines.',
  })
  @ApiOkResponse({ type: DeletedSlaPolicyView })
  @ApiProblemResponses(403, notFound('SLA policy'))
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<DeletedSlaPolicyView> {
    return this.policies.remove(agent.companyId, id, origin);
  }
}
