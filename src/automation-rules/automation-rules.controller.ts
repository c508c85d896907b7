import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { PageQueryDto } from '../common/pagination/page-query.dto.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';
import { AutomationRuleView, DeletedAutomationRuleView } from './automation-rule.view.js';
import { AutomationRulesService, RuleTestView } from './automation-rules.service.js';
import { AutomationRunView } from './automation-run.view.js';
import { CreateAutomationRuleDto, TestAutomationRuleDto, UpdateAutomationRuleDto } from './dto/automation-rule.dto.js';

const ID_PARAM = { name: 'id', example: '6650f0c2a1b2c3d4e5f60780' };
const FIELDS =
  'Trigger, conditions (docs/filters.md) and actions are checked on save: an unknown event, a duration out of range, an ' +
  'action with a missing or foreign id, a `set_attribute` value of the wrong type, more than 20 actions answer 400 naming ' +
  'the field, and nothing is stored. At most 200 rules per company. Every edit moves `version`.';

@ApiTags('Automation rules')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('automation-rules')
export class AutomationRulesController {
  constructor(private readonly rules: AutomationRulesService) {}

  @Get()
  @ApiOperation({ summary: 'List automation rules, newest first', description: 'Any agent.' })
  @ApiPageResponse(AutomationRuleView)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: PageQueryDto): Promise<Page<AutomationRuleView>> {
    return this.rules.list(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get an automation rule', description: "Any agent. A missing, malformed or other company's id answers 404." })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: AutomationRuleView })
  @ApiProblemResponses(notFound('Automation rule', ID_PARAM.example))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<AutomationRuleView> {
    return this.rules.get(agent.companyId, id);
  }

  @Get(':id/runs')
  @ApiOperation({
    summary: "A rule's runs, newest first",
    description: 'Any agent. Kept 30 days; a rule whose conditions did not match records nothing.',
  })
  @ApiParam(ID_PARAM)
  @ApiPageResponse(AutomationRunView)
  @ApiProblemResponses(notFound('Automation rule', ID_PARAM.example))
  runs(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Query() query: PageQueryDto): Promise<Page<AutomationRunView>> {
    return this.rules.listRuns(agent.companyId, id, query);
  }

  @Post()
  @RequireRole('supervisor')
  @ApiOperation({ summary: 'Create an automation rule (supervisor, admin)', description: FIELDS })
  @ApiCreatedResponse({ type: AutomationRuleView })
  @ApiProblemResponses(403)
  create(
    @CurrentAgent() agent: AgentPrincipal,
    @Body() dto: CreateAutomationRuleDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<AutomationRuleView> {
    return this.rules.create(agent.companyId, dto, origin);
  }

  @Post(':id/test')
  @HttpCode(200)
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Dry-run a rule on a conversation (supervisor, admin)',
    description: 'Evaluates the conditions on the conversation as it is now and says whether each action would apply; changes nothing.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: RuleTestView })
  @ApiProblemResponses(403, notFound('Automation rule', ID_PARAM.example))
  test(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Body() dto: TestAutomationRuleDto): Promise<RuleTestView> {
    return this.rules.test(agent.companyId, id, dto.conversationId);
  }

  @Patch(':id')
  @RequireRole('supervisor')
  @ApiOperation({ summary: 'Change an automation rule (supervisor, admin)', description: FIELDS })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: AutomationRuleView })
  @ApiProblemResponses(403, notFound('Automation rule', ID_PARAM.example))
  update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateAutomationRuleDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<AutomationRuleView> {
    return this.rules.update(agent.companyId, id, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('supervisor')
  @ApiOperation({ summary: 'Delete an automation rule (supervisor, admin)', description: 'Its timers already set do nothing when they fire.' })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: DeletedAutomationRuleView })
  @ApiProblemResponses(403, notFound('Automation rule', ID_PARAM.example))
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<DeletedAutomationRuleView> {
    return this.rules.remove(agent.companyId, id, origin);
  }
}
