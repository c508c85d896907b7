import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { BusinessHoursStatusView } from './business-hours-status.view.js';
import { BusinessHoursService } from './business-hours.service.js';

@ApiTags('Settings')
@ApiBearerAuth()
@ApiProblemResponses(401, 429)
@Controller('settings/business-hours')
export class BusinessHoursController {
  constructor(private readonly businessHours: BusinessHoursService) {}

  @Get('status')
  @ApiOperation({
    summary: 'Open now? And until when',
    description:
      'Reads `businessHours` of the settings in their time zone: the windows of the weekday (several a day for split ' +
      'shifts; a window ends at 24:00 at the latest, and one ending at 24:00 runs on into one starting at 00:00 the ' +
      'next day), holidays closed all day. Windows keep their local hours across daylight-saving changes. Business ' +
      'hours disabled: `open: true`, `nextChangeAt: null`. Any agent.',
  })
  @ApiOkResponse({ type: BusinessHoursStatusView })
  status(@CurrentAgent() agent: AgentPrincipal): Promise<BusinessHoursStatusView> {
    return this.businessHours.status(agent.companyId);
  }
}
