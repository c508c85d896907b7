import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { CreateMessageTemplateDto } from './dto/create-message-template.dto.js';
import { ListMessageTemplatesQueryDto } from './dto/list-message-templates-query.dto.js';
import { DeletedMessageTemplateView, MessageTemplateView } from './message-template.view.js';
import { MessageTemplatesService } from './message-templates.service.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

const ID_PARAM = { name: 'id', example: '6650f0c2a1b2c3d4e5f60740' };

export const TEMPLATE_LIFE_CYCLE =
  'A new template is `pending`; the channel connector submits it to the channel and reports the verdict ' +
  '(`PATCH /api/external/message-templates/{id}`, scope `templates:manage`): `approved` or `rejected` with a ' +
  '`rejectionReason`. Each change, creation included (`previousStatus: null`), emits `template.status_changed` ' +
  '(Interface B `TEMPLATE_STATUS_CHANGED`). Only `approved` templates can be sent: ' +
  '`POST /v1/conversations/{id}/messages { template: { name, language, variables } }`, also outside the reply window.';

@ApiTags('Message templates')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('message-templates')
export class MessageTemplatesController {
  constructor(private readonly templates: MessageTemplatesService) {}

  @Get()
  @ApiOperation({ summary: 'List message templates, newest first', description: `Any agent. ${TEMPLATE_LIFE_CYCLE}` })
  @ApiPageResponse(MessageTemplateView)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: ListMessageTemplatesQueryDto): Promise<Page<MessageTemplateView>> {
    return this.templates.list(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a message template', description: "Any agent. A missing, malformed or other company's id answers 404." })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: MessageTemplateView })
  @ApiProblemResponses(notFound('Message template', ID_PARAM.example))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<MessageTemplateView> {
    return this.templates.get(agent.companyId, id);
  }

  @Post()
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Create a message template (supervisor), pending the channel’s approval',
    description:
      '`channel` is the key of one of your channels (400 otherwise). `body` holds placeholders `{{1}}`..`{{n}}` ' +
      'numbered from 1 without gaps (400 naming the gap). Channel + name + language is unique: 409 when taken. ' +
      TEMPLATE_LIFE_CYCLE,
  })
  @ApiCreatedResponse({ type: MessageTemplateView })
  @ApiProblemResponses(403, 409)
  create(
    @CurrentAgent() agent: AgentPrincipal,
    @Body() dto: CreateMessageTemplateDto,
    @AuditOriginOf() origin: AuditOrigin,
  ): Promise<MessageTemplateView> {
    return this.templates.create(agent.companyId, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('supervisor')
  @ApiOperation({
    summary: 'Delete a message template (supervisor)',
    description: 'It can no longer be sent; messages already sent with it keep their text and `template`.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: DeletedMessageTemplateView })
  @ApiProblemResponses(403, notFound('Message template', ID_PARAM.example))
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<DeletedMessageTemplateView> {
    return this.templates.remove(agent.companyId, id, origin);
  }
}
