import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { CreateWebhookDto } from './dto/create-webhook.dto.js';
import { UpdateWebhookDto } from './dto/update-webhook.dto.js';
import { CreatedWebhookView, DeletedWebhookView, WebhookView } from './webhook.view.js';
import { DELIVERY_FORMAT_DOC } from './webhook-docs.js';
import { WebhooksService } from './webhooks.service.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

const ID_PARAM = { name: 'id', example: 'wh_6650f0c2a1b2c3d4e5f60718' };

@ApiTags('Webhooks')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@RequireRole('admin')
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Post()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Register a webhook; its signing secret is shown only in this response', description: DELIVERY_FORMAT_DOC })
  @ApiCreatedResponse({ type: CreatedWebhookView })
  async create(
    @CurrentAgent() agent: AgentPrincipal,
    @Body() dto: CreateWebhookDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<CreatedWebhookView> {
    return this.webhooks.create(agent.companyId, dto, origin);
  }

  @Get()
  @ApiOperation({
    summary: 'List webhooks (without secrets), newest first',
    description: 'Admins only. Secrets are shown once, when a webhook is created.',
  })
  @ApiPageResponse(WebhookView)
  async list(@CurrentAgent() agent: AgentPrincipal, @Query() query: PageQueryDto): Promise<Page<WebhookView>> {
    return this.webhooks.page(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get one webhook',
    description: "Admins only. Without its secret. A missing, malformed or other company's id answers 404.",
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookView })
  @ApiProblemResponses(notFound('Webhook', ID_PARAM.example))
  async get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<WebhookView> {
    return this.webhooks.get(agent.companyId, id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Change a webhook; isActive false pauses it, true resumes its pending deliveries',
    description: DELIVERY_FORMAT_DOC,
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: WebhookView })
  @ApiProblemResponses(notFound('Webhook', ID_PARAM.example))
  async update(
    @CurrentAgent() agent: AgentPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateWebhookDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<WebhookView> {
    return this.webhooks.update(agent.companyId, id, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Delete a webhook; its pending deliveries are discarded',
    description: 'Admins only. Deliveries not yet made are never attempted; an attempt in flight is not retried.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: DeletedWebhookView })
  @ApiProblemResponses(notFound('Webhook', ID_PARAM.example))
  async remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<DeletedWebhookView> {
    return this.webhooks.remove(agent.companyId, id, origin);
  }
}
