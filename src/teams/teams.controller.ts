import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { CreateTeamDto, UpdateTeamDto } from './dto/team.dto.js';
import { DeletedTeamView, TeamView } from './team.view.js';
import { TeamsService } from './teams.service.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

const ID_PARAM = { name: 'id', example: '6650f0c2a1b2c3d4e5f60740' };
const FIELDS =
  '`memberIds` must be active agents of your company (at most 500); `overflow` `{ action: team | message | close, ' +
  'teamId?, text? }` needs `teamId` (another team) for `team` and `text` for `message`; `maxWaitSeconds` 60..604800 ' +
  'or null. At most 100 teams per company; names are unique (409).';

@ApiTags('Teams')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('teams')
export class TeamsController {
  constructor(private readonly teams: TeamsService) {}

  @Get()
  @ApiOperation({ summary: 'List teams, newest first', description: 'Any agent.' })
  @ApiPageResponse(TeamView)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: PageQueryDto): Promise<Page<TeamView>> {
    return this.teams.list(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a team', description: "Any agent. A missing, malformed or other company's id answers 404." })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: TeamView })
  @ApiProblemResponses(notFound('Team', ID_PARAM.example))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<TeamView> {
    return this.teams.get(agent.companyId, id);
  }

  @Post()
  @RequireRole('supervisor')
  @ApiOperation({ summary: 'Create a team (supervisor, admin)', description: FIELDS })
  @ApiCreatedResponse({ type: TeamView })
  @ApiProblemResponses(403, 409)
  create(@CurrentAgent() agent: AgentPrincipal, @Body() dto: CreateTeamDto, @AuditOriginOf() origin: AuditOrigin): Promise<TeamView> {
    return this.teams.create(agent.companyId, dto, origin);
  }

  @Patch(':id')
  @RequireRole('supervisor')
  @ApiOperation({ summary: 'Change a team (supervisor, admin)', description: FIELDS })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: TeamView })
  @ApiProblemResponses(403, 409, notFound('Team', ID_PARAM.example))
  update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateTeamDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<TeamView> {
    return this.teams.update(agent.companyId, id, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Delete a team (supervisor, admin)',
    description: 'Its waiting conversations stay in the company queue (`teamId: null`); overflows into it are cleared.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: DeletedTeamView })
  @ApiProblemResponses(403, notFound('Team', ID_PARAM.example))
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<DeletedTeamView> {
    return this.teams.remove(agent.companyId, id, origin);
  }
}
