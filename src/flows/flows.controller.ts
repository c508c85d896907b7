import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import type { FlowExecutionSnapshot } from '../events/domain-events.js';
import { ExecuteFlowDto } from './dto/execute-flow.dto.js';
import { FlowExecutionView } from './flow-execution.view.js';
import { FLOW_STEP_DTOS } from './dto/flow-steps.dto.js';
import { DeletedFlowView, FlowView } from './flow.view.js';
import { ListFlowsQueryDto } from './dto/list-flows-query.dto.js';
import { WriteFlowDto } from './dto/write-flow.dto.js';
import { FlowsService } from './flows.service.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

@ApiTags('Flows')
@ApiBearerAuth()
@ApiExtraModels(...FLOW_STEP_DTOS)
@ApiProblemResponses(401, 429)
@Controller('flows')
export class FlowsController {
  constructor(private readonly flows: FlowsService) {}

  @Get()
  @ApiOperation({
    summary: 'List flows, newest first',
    description: 'Inactive flows included; pass `nextCursor` back as `cursor`.',
  })
  @ApiPageResponse(FlowView)
  @ApiProblemResponses(400)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListFlowsQueryDto): Promise<Page<FlowView>> {
    return this.flows.list(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'One flow',
    description: "A missing, malformed or other company's id answers 404.",
  })
  @ApiOkResponse({ type: FlowView })
  @ApiProblemResponses(notFound('Flow'))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<FlowView> {
    return this.flows.get(agent.companyId, id);
  }

  @Post()
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Create a flow (supervisor)',
    description:
      'Steps are validated by type: send_message {text}, send_template {template: {name, language, variables?}}, ' +
      'assign {agentId? | strategy?}, set_priority {priority}, ' +
      'add_tags {tags}, handoff, close {reason?}; 1 to 50 of them. An unknown type answers 400 naming it.',
  })
  @ApiCreatedResponse({ type: FlowView })
  @ApiProblemResponses(400)
  create(@CurrentAgent() agent: AgentPrincipal, @Body() dto: WriteFlowDto, @AuditOriginOf() origin: AuditOrigin): Promise<FlowView> {
    return this.flows.create(agent.companyId, dto, origin);
  }

  @Put(':id')
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Replace a flow (supervisor)',
    description: 'The body is a whole flow, as on create: fields left out take their defaults again.',
  })
  @ApiOkResponse({ type: FlowView })
  @ApiProblemResponses(400, notFound('Flow'))
  replace(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Body() dto: WriteFlowDto, @AuditOriginOf() origin: AuditOrigin): Promise<FlowView> {
    return this.flows.replace(agent.companyId, id, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Delete a flow (supervisor); its past executions stay',
    description: 'Supervisors and admins. The flow stops triggering at once; a run already started finishes.',
  })
  @ApiOkResponse({ type: DeletedFlowView })
  @ApiProblemResponses(notFound('Flow'))
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<DeletedFlowView> {
    return this.flows.remove(agent.companyId, id, origin);
  }

  @Post(':id/execute')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Run a flow on a conversation now',
    description:
      'Steps run in order with the same rules as the API (a step the conversation rules refuse fails). ' +
      'The first failing step makes the run `failed` and the rest `skipped`; either way the run is recorded, ' +
      'answered with 200 and published as `flow.executed`. 400 when the flow is inactive, the conversation is ' +
      'closed, or conversationId names no conversation of your company.',
  })
  @ApiOkResponse({ type: FlowExecutionView })
  @ApiProblemResponses(400, notFound('Flow'))
  execute(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: ExecuteFlowDto,
  ): Promise<FlowExecutionSnapshot> {
    return this.flows.execute(agent.companyId, id, dto);
  }
}
