import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { ApiKeyPrincipal } from '../auth/auth-principal.js';
import { ApiKeyAuth } from '../auth/decorators/api-key-auth.decorator.js';
import { CurrentApiKey } from '../auth/decorators/principal.decorator.js';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ApiEnvelopeErrorResponses, notFound } from '../common/errors/api-error-responses.js';
import { CreateExternalWebhookDto } from './dto/create-webhook.dto.js';
import { ApiDataEnvelope, envelope, MessageEnvelope, type DataEnvelope } from './dto/envelope.js';
import { ExternalWebhookSummary } from './external-webhook.view.js';
import { CreatedWebhookView, WebhookView } from './webhook.view.js';
import { UpdateWebhookDto } from './dto/update-webhook.dto.js';
import { DELIVERY_FORMAT_DOC } from './webhook-docs.js';
import { WebhooksService } from './webhooks.service.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

const ID_PARAM = { name: 'id', example: 'wh_6650f0c2a1b2c3d4e5f60718' };
const WEBHOOK_NOT_FOUND = notFound('Webhook', ID_PARAM.example);
const CHANNELS_DOC =
  ' A key limited to channels sees and manages only webhooks whose channels all lie within its own; the others ' +
  'answer 404. Its new webhook gets its channels when `channels` is left out; a channel beyond them answers 403.';

/** Interface B: the same webhooks, in the `{ success, data | message | error }` envelope. */
@ApiTags('Interface B: webhooks')
@ApiKeyAuth()
@RequireScopes('webhooks:manage')
@ApiEnvelopeErrorResponses(401, 429, 500)
@Controller({ path: 'api/external/webhooks', version: VERSION_NEUTRAL })
export class ExternalWebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @ApiOperation({
    summary: 'List the workspace webhooks (without retryConfig), newest first',
    description: 'API key with the `webhooks:manage` scope. Secrets are shown once, when a webhook is created.' + CHANNELS_DOC,
  })
  @ApiDataEnvelope(200, ExternalWebhookSummary, { isArray: true, description: 'Every webhook of the workspace' })
  async list(@CurrentApiKey() key: ApiKeyPrincipal): Promise<DataEnvelope<ExternalWebhookSummary[]>> {
    return envelope((await this.webhooks.all(key.companyId, key.channels)).map(ExternalWebhookSummary.from));
  }

  @Post()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({ summary: 'Register a webhook; its signing secret is shown only in this response', description: DELIVERY_FORMAT_DOC + CHANNELS_DOC })
  @ApiDataEnvelope(201, CreatedWebhookView, { description: 'Created' })
  @ApiEnvelopeErrorResponses(400, 403)
  async create(@CurrentApiKey() key: ApiKeyPrincipal, @Body() dto: CreateExternalWebhookDto, @AuditOriginOf() origin: AuditOrigin): Promise<DataEnvelope<CreatedWebhookView>> {
    return envelope(await this.webhooks.create(key.companyId, dto, origin, key.channels));
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get one webhook, with its retryConfig',
    description: "API key with the `webhooks:manage` scope. A missing or other workspace's id answers 404." + CHANNELS_DOC,
  })
  @ApiParam(ID_PARAM)
  @ApiDataEnvelope(200, WebhookView, { description: 'The webhook' })
  @ApiEnvelopeErrorResponses(WEBHOOK_NOT_FOUND)
  async get(@CurrentApiKey() key: ApiKeyPrincipal, @Param('id') id: string): Promise<DataEnvelope<WebhookView>> {
    return envelope(await this.webhooks.get(key.companyId, id, key.channels));
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change a webhook; isActive false pauses it (it is kept), true resumes it', description: DELIVERY_FORMAT_DOC + CHANNELS_DOC })
  @ApiParam(ID_PARAM)
  @ApiDataEnvelope(200, WebhookView, { description: 'The updated webhook' })
  @ApiEnvelopeErrorResponses(400, 403, WEBHOOK_NOT_FOUND)
  async update(
    @CurrentApiKey() key: ApiKeyPrincipal,
    @Param('id') id: string,
    @Body() dto: UpdateWebhookDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<DataEnvelope<WebhookView>> {
    return envelope(await this.webhooks.update(key.companyId, id, dto, origin, key.channels));
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Delete a webhook; deliveries not yet made are discarded',
    description: 'API key with the `webhooks:manage` scope. An attempt in flight is not retried.' + CHANNELS_DOC,
  })
  @ApiParam(ID_PARAM)
  @ApiResponse({ status: 200, type: MessageEnvelope, description: 'Deleted' })
  @ApiEnvelopeErrorResponses(WEBHOOK_NOT_FOUND)
  async remove(@CurrentApiKey() key: ApiKeyPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<MessageEnvelope> {
    await this.webhooks.remove(key.companyId, id, origin, key.channels);
    return { success: true, message: `Webhook ${id} deleted` };
  }
}
