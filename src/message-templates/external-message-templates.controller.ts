import { Body, Controller, Get, Param, Patch, Query, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam, ApiTags, getSchemaPath } from '@nestjs/swagger';
import type { ApiKeyPrincipal } from '../auth/auth-principal.js';
import { ApiKeyAuth } from '../auth/decorators/api-key-auth.decorator.js';
import { CurrentApiKey } from '../auth/decorators/principal.decorator.js';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ApiEnvelopeErrorResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiDataEnvelope, envelope, type DataEnvelope } from '../webhooks/dto/envelope.js';
import { ListMessageTemplatesQueryDto } from './dto/list-message-templates-query.dto.js';
import { ReportTemplateStatusDto } from './dto/report-template-status.dto.js';
import { MessageTemplateView } from './message-template.view.js';
import { TEMPLATE_LIFE_CYCLE } from './message-templates.controller.js';
import { MessageTemplatesService } from './message-templates.service.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

const ID_PARAM = { name: 'id', example: '6650f0c2a1b2c3d4e5f60740' };

/** A page of templates in the Interface B envelope. */
interface TemplatePageEnvelope extends DataEnvelope<MessageTemplateView[]> {
  nextCursor: string | null;
}

/** Interface B: the channel connector's side of the approval loop, in the `{ success, data | error }` envelope. */
@ApiTags('Interface B: message templates')
@ApiKeyAuth()
@RequireScopes('templates:manage')
@ApiEnvelopeErrorResponses(400, 401, 403, 429, 500)
@Controller({ path: 'api/external/message-templates', version: VERSION_NEUTRAL })
export class ExternalMessageTemplatesController {
  constructor(private readonly templates: MessageTemplatesService) {}

  @Get()
  @ApiOperation({
    summary: 'List the workspace’s message templates, newest first (`status=pending`: those awaiting a verdict)',
    description:
      'API key with the `templates:manage` scope. Pass `nextCursor` back as `cursor`. A key limited to channels lists ' +
      `only their templates; \`channel\` naming another answers 403. ${TEMPLATE_LIFE_CYCLE}`,
  })
  @ApiExtraModels(MessageTemplateView)
  @ApiOkResponse({
    description: 'One page',
    schema: {
      type: 'object',
      required: ['success', 'data', 'nextCursor'],
      properties: {
        success: { type: 'boolean', example: true },
        data: { type: 'array', items: { $ref: getSchemaPath(MessageTemplateView) } },
        nextCursor: { type: 'string', nullable: true, description: 'Opaque; null on the last page' },
      },
    },
  })
  async list(@CurrentApiKey() key: ApiKeyPrincipal, @Query() query: ListMessageTemplatesQueryDto): Promise<TemplatePageEnvelope> {
    const page = await this.templates.list(key.companyId, query, key.channels);
    return { ...envelope(page.data), nextCursor: page.nextCursor };
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get one message template',
    description: "API key with the `templates:manage` scope. A missing or other workspace's id answers 404; a template on a channel the key is not limited to, 403.",
  })
  @ApiParam(ID_PARAM)
  @ApiDataEnvelope(200, MessageTemplateView, { description: 'The template' })
  @ApiEnvelopeErrorResponses(notFound('Message template', ID_PARAM.example))
  async get(@CurrentApiKey() key: ApiKeyPrincipal, @Param('id') id: string): Promise<DataEnvelope<MessageTemplateView>> {
    return envelope(await this.templates.get(key.companyId, id, key.channels));
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Report the channel’s verdict on a template: approved, or rejected with a reason',
    description:
      'API key with the `templates:manage` scope. A new status emits `template.status_changed` ' +
      '(`TEMPLATE_STATUS_CHANGED`) with the template and its `previousStatus`; the status it already has answers 200 ' +
      'and changes nothing. `rejectionReason` only with `rejected` (400 otherwise); it is cleared by any other status. ' +
      'A template on a channel the key is not limited to answers 403.',
  })
  @ApiParam(ID_PARAM)
  @ApiDataEnvelope(200, MessageTemplateView, { description: 'The template as it stands' })
  @ApiEnvelopeErrorResponses(notFound('Message template', ID_PARAM.example), 409)
  async report(@CurrentApiKey() key: ApiKeyPrincipal, @Param('id') id: string, @Body() dto: ReportTemplateStatusDto, @AuditOriginOf() origin: AuditOrigin): Promise<DataEnvelope<MessageTemplateView>> {
    return envelope(await this.templates.report(key.companyId, id, dto, origin, key.channels));
  }
}
