import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { AgentView } from './agent.view.js';
import { AgentsService } from './agents.service.js';
import { CreateAgentDto } from './dto/create-agent.dto.js';
import { ListAgentsQueryDto } from './dto/list-agents-query.dto.js';
import { UpdateAgentDto } from './dto/update-agent.dto.js';

/** In a path, `me` stands for the calling agent: `GET /v1/agents/me` is who the token belongs to. */
const ME = 'me';

/** The agent a path's `:id` names: `me` is the caller. */
function agentIdOf(caller: AgentPrincipal, id: string): string {
  return id === ME ? caller.agentId : id;
}

@ApiTags('Agents')
@ApiBearerAuth()
@ApiProblemResponses(401, 429)
@Controller('agents')
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @Get()
  @ApiOperation({
    summary: 'List agents, newest first; deactivated agents included unless filtered out',
    description: 'Any agent of the company may read the list; `isActive=true` leaves deactivated agents out.',
  })
  @ApiPageResponse(AgentView)
  @ApiProblemResponses(400)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListAgentsQueryDto): Promise<Page<AgentView>> {
    return this.agents.list(agent.companyId, query);
  }

  // Declared before `:id`, so that `me` is never read as an id.
  @Get(ME)
  @ApiOperation({
    summary: 'The calling agent: who the bearer token belongs to',
    description: 'The agent as `GET /v1/agents/{id}` answers it, for a front end to learn who is logged in (its role included).',
  })
  @ApiOkResponse({ type: AgentView })
  me(@CurrentAgent() agent: AgentPrincipal): Promise<AgentView> {
    return this.agents.get(agent.companyId, agent.agentId);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'One agent',
    description: "A missing, malformed or other company's id answers 404.",
  })
  @ApiOkResponse({ type: AgentView })
  @ApiProblemResponses(notFound('Agent'))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<AgentView> {
    return this.agents.get(agent.companyId, id);
  }

  @Post()
  @RequireRole('admin')
  @ApiOperation({
    summary: 'Add an agent (admin)',
    description:
      'With a password the agent can log in with its e-mail. 409 when the e-mail is already used in the ' +
      'company, or (with a password) when it can already log in to any company.',
  })
  @ApiCreatedResponse({ type: AgentView })
  @ApiProblemResponses(400, 409)
  create(@CurrentAgent() agent: AgentPrincipal, @Body() dto: CreateAgentDto, @AuditOriginOf() origin: AuditOrigin): Promise<AgentView> {
    return this.agents.create(agent.companyId, dto, origin);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change an agent',
    description:
      'Admins may change every field; any agent may change its own `status` (anything else answers 403); ' +
      '`PATCH /v1/agents/me` changes the calling agent. ' +
      'A deactivated agent stays offline until reactivated with `isActive: true`. A new role, password or ' +
      'reactivation ends the agent\'s earlier tokens (and its open event streams). An admin given another role loses the ' +
      'API keys it created (`revokedReason: creator_demoted`), as a deactivated one does (`creator_deactivated`); ' +
      'promoting it again does not bring them back. Demoting or deactivating the last active admin answers 409.',
  })
  @ApiOkResponse({ type: AgentView })
  @ApiProblemResponses(400, [403, 'Only admins may change other agents'], notFound('Agent'), 409)
  update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateAgentDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<AgentView> {
    return this.agents.update(agent, agentIdOf(agent, id), dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('admin')
  @ApiOperation({
    summary: 'Deactivate an agent (admin); the record stays',
    description:
      '`isActive: false` and `status: offline`; its open human conversations go back to the queue; its ' +
      'tokens are refused from the next request (its open event streams end within 10 s) and it can no longer log in; ' +
      'the API keys it created are revoked (`revokedReason: creator_deactivated`). Answers the agent. ' +
      'Deactivating the last active admin answers 409; `me` is the calling admin.',
  })
  @ApiOkResponse({ type: AgentView })
  @ApiProblemResponses(notFound('Agent'), 409)
  deactivate(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<AgentView> {
    return this.agents.deactivate(agent.companyId, agentIdOf(agent, id), origin);
  }
}
