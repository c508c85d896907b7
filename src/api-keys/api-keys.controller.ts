import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { ApiKeysService } from './api-keys.service.js';
import { ApiKeyView, CreatedApiKeyView } from './api-key.view.js';
import { CreateApiKeyDto } from './dto/create-api-key.dto.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

@ApiTags('API keys')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@RequireRole('admin')
@Controller('api-keys')
export class ApiKeysController {
  constructor(private readonly apiKeys: ApiKeysService) {}

  @Post()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Create an API key for Interface B; the key is shown only in this response',
    description:
      'Admins only. Only a hash of the key is stored: keep it now, it cannot be shown again. Send it as ' +
      '`x-api-key` on `/api/external` routes; each route needs one of its scopes. A company holds at most ' +
      'API_KEYS_PER_COMPANY (default 20) active keys: 400 past that, revoke one first. A key stops working at ' +
      '`expiresAt`, when revoked, and when the admin who created it is deactivated.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyView })
  create(@CurrentAgent() agent: AgentPrincipal, @Body() dto: CreateApiKeyDto, @AuditOriginOf() origin: AuditOrigin): Promise<CreatedApiKeyView> {
    return this.apiKeys.create(agent, dto, origin);
  }

  @Get()
  @ApiOperation({
    summary: 'List API keys (without the keys), newest first, revoked ones included',
    description: 'Admins only. Each key shows its first characters (`keyPrefix`) to tell them apart.',
  })
  @ApiPageResponse(ApiKeyView)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: PageQueryDto): Promise<Page<ApiKeyView>> {
    return this.apiKeys.list(agent.companyId, query);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Revoke an API key at once; answers the revoked key',
    description:
      'Admins only. Requests with the key answer 401 from then on, in every process of the deployment within 2 s. ' +
      'Revoking a revoked key changes nothing.',
  })
  @ApiOkResponse({ type: ApiKeyView })
  @ApiProblemResponses(notFound('API key'))
  revoke(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<ApiKeyView> {
    return this.apiKeys.revoke(agent.companyId, id, origin);
  }
}
