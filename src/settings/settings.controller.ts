import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { SettingsView } from './settings.view.js';
import { UpdateSettingsDto } from './dto/update-settings.dto.js';
import { SettingsService } from './settings.service.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

@ApiTags('Settings')
@ApiBearerAuth()
@ApiProblemResponses(401, 429)
@Controller('settings')
export class SettingsController {
  constructor(private readonly settings: SettingsService) {}

  @Get()
  @ApiOperation({
    summary: "The company's settings",
    description: 'Readable by every agent; only admins change them (PATCH).',
  })
  @ApiOkResponse({ type: SettingsView })
  get(@CurrentAgent() agent: AgentPrincipal): Promise<SettingsView> {
    return this.settings.get(agent.companyId);
  }

  @Patch()
  @RequireRole('admin')
  @ApiOperation({
    summary: 'Change settings (admin)',
    description:
      'Merges: only the fields sent change, nested objects field by field (`{"autoAssignment":{"enabled":true}}` ' +
      'keeps the strategy and capacity). `businessHours.schedule` is replaced as a whole. null is refused.',
  })
  @ApiOkResponse({ type: SettingsView })
  @ApiProblemResponses(400)
  update(@CurrentAgent() agent: AgentPrincipal, @Body() dto: UpdateSettingsDto, @AuditOriginOf() origin: AuditOrigin): Promise<SettingsView> {
    return this.settings.update(agent.companyId, dto, origin);
  }
}
