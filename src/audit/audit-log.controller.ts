import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { AuditEntryView, AuditVerificationView } from './audit-entry.view.js';
import { AuditLogService } from './audit-log.service.js';
import { AuditLogQueryDto } from './dto/audit-log-query.dto.js';

@ApiTags('Audit log')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@RequireRole('admin')
@Controller('audit-log')
export class AuditLogController {
  constructor(private readonly audit: AuditLogService) {}

  @Get()
  @ApiOperation({
    summary: 'Who changed what: the audit log, newest first',
    description:
      "Admins only. Logins, failed logins and every change that needs the supervisor or admin role or an API key's " +
      'management scope. Entries hold no personal data of contacts (their fields are named, never shown) and no ' +
      'secret or password ("[changed]"). No route changes or deletes an entry; they are kept AUDIT_RETENTION_DAYS.',
  })
  @ApiPageResponse(AuditEntryView)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: AuditLogQueryDto): Promise<Page<AuditEntryView>> {
    return this.audit.list(agent.companyId, query);
  }

  @Get('verify')
  @ApiOperation({
    summary: 'Check the hash chain of the audit log',
    description: 'Admins only. `firstBadSequence` names the first entry changed (or the first after one removed).',
  })
  @ApiOkResponse({ type: AuditVerificationView })
  verify(@CurrentAgent() agent: AgentPrincipal): Promise<AuditVerificationView> {
    return this.audit.verify(agent.companyId);
  }
}
