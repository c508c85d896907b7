import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { RequireRole } from '../auth/decorators/require-role.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiPageResponse, type Page } from '../common/pagination/page.js';
import { PageQueryDto } from '../common/pagination/page-query.dto.js';
import { ChannelView, DeletedChannelView } from './channel.view.js';
import { ChannelsService } from './channels.service.js';
import { CreateChannelDto } from './dto/create-channel.dto.js';
import { UpdateChannelDto } from './dto/update-channel.dto.js';
import type { AuditOrigin } from '../audit/audit-entry.js';
import { AuditOriginOf } from '../audit/audit-origin.decorator.js';

const ID_PARAM = { name: 'id', example: '6650f0c2a1b2c3d4e5f60730' };

const WINDOW =
  'A channel with `replyWindowHours` lets free-form messages (agent text, media, canned responses, flow and bot ' +
  'messages) through only within that many hours of the contact\'s last message (the conversation shows ' +
  '`replyWindowExpiresAt`); outside it they answer 409 `reply-window-closed`, and only approved templates go through. ' +
  'A conversation on a key without a channel record has no window.';

@ApiTags('Channels')
@ApiBearerAuth()
@ApiProblemResponses(400, 401, 429)
@Controller('channels')
export class ChannelsController {
  constructor(private readonly channels: ChannelsService) {}

  @Get()
  @ApiOperation({ summary: 'List channels, newest first', description: `Any agent. ${WINDOW}` })
  @ApiPageResponse(ChannelView)
  list(@CurrentAgent() agent: AgentPrincipal, @Query() query: PageQueryDto): Promise<Page<ChannelView>> {
    return this.channels.list(agent.companyId, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a channel', description: "Any agent. A missing, malformed or other company's id answers 404." })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: ChannelView })
  @ApiProblemResponses(notFound('Channel', ID_PARAM.example))
  get(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<ChannelView> {
    return this.channels.get(agent.companyId, id);
  }

  @Post()
  @RequireRole('admin')
  @ApiOperation({
    summary: 'Create a channel (admin)',
    description:
      `\`key\` is what conversations on it carry in \`channel\`: unique in your company (409 when taken), lower-case ` +
      '`[a-z0-9_.:+-]{1,64}`, fixed once created, as is `type`. `replyWindowHours` defaults to 24 for `whatsapp`, ' +
      `null otherwise. At most 100 channels per company. Changes reach every API process within 2 seconds. ${WINDOW}`,
  })
  @ApiCreatedResponse({ type: ChannelView })
  @ApiProblemResponses(403, 409)
  create(@CurrentAgent() agent: AgentPrincipal, @Body() dto: CreateChannelDto, @AuditOriginOf() origin: AuditOrigin): Promise<ChannelView> {
    return this.channels.create(agent.companyId, dto, origin);
  }

  @Patch(':id')
  @RequireRole('admin')
  @ApiOperation({
    summary: 'Change a channel (admin): name, address, replyWindowHours, isActive',
    description:
      'A new `replyWindowHours` applies to each conversation from its next inbound message; windows already open keep ' +
      'their end. null removes the window: free-form messages go through again at once.',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: ChannelView })
  @ApiProblemResponses(403, notFound('Channel', ID_PARAM.example))
  update(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @Body() dto: UpdateChannelDto, @AuditOriginOf() origin: AuditOrigin): Promise<ChannelView> {
    return this.channels.update(agent.companyId, id, dto, origin);
  }

  @Delete(':id')
  @HttpCode(200)
  @RequireRole('admin')
  @ApiOperation({
    summary: 'Delete a channel (admin)',
    description: 'Its conversations and templates stay; its conversations then behave as on a key without a record (no reply window).',
  })
  @ApiParam(ID_PARAM)
  @ApiOkResponse({ type: DeletedChannelView })
  @ApiProblemResponses(403, notFound('Channel', ID_PARAM.example))
  remove(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string, @AuditOriginOf() origin: AuditOrigin): Promise<DeletedChannelView> {
    return this.channels.remove(agent.companyId, id, origin);
  }
}
